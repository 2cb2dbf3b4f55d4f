//go:build !unix

package report

import (
	"io/fs"
	"os"
)

// nonBlockFlag: without O_NONBLOCK a FIFO open may wait for a reader.
const nonBlockFlag = 0

func isNoReader(error) bool { return false }

// accessWrite has no check without access(2); the write itself reports.
func accessWrite(string, bool) error { return nil }

func keepOwner(*os.File, fs.FileInfo) {}
