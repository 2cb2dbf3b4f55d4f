//go:build unix

package testrun

import (
	"path/filepath"
	"syscall"
	"testing"
)

// Fifo makes a named pipe called name in a temporary directory of t's and
// returns its path. It fails t where the system makes none: a test of
// how pacer waits on a FIFO must not pass by skipping.
func Fifo(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return path
}
