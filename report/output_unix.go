//go:build unix

package report

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// nonBlockFlag opens a FIFO without waiting for a reader.
const nonBlockFlag = syscall.O_NONBLOCK

// isNoReader reports the error of a non-blocking open of a FIFO that no
// process has open for reading.
func isNoReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

// accessWrite asks the kernel whether name may be written (a directory:
// entries created in it), without opening it.
func accessWrite(name string, dir bool) error {
	mode := uint32(unixWriteOK)
	if dir {
		mode |= unixExecOK
	}
	return syscall.Access(name, mode)
}

// The access(2) modes (the syscall package has no names for them).
const (
	unixExecOK  = 0x1
	unixWriteOK = 0x2
)

// keepOwner gives f the owner of the file it replaces, when the process
// may (root); otherwise the replacement belongs to the writer, as with
// any rename.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok || (int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid()) {
		return
	}
	f.Chown(int(st.Uid), int(st.Gid)) // refused unless privileged: see above
}
