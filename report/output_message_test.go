//go:build linux

package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputErrorSaysWriteOnce: a failed write names the path once, not
// once per layer ("write /dev/full: write /dev/full: no space left on
// device").
func TestOutputErrorSaysWriteOnce(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	err := writeOutput("/dev/full", []byte("x"))
	if err == nil || err.Error() != "write /dev/full: no space left on device" {
		t.Errorf("writeOutput(/dev/full) = %v; want write /dev/full: no space left on device", err)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("%v: the errno is lost", err)
	}
}

// TestOutputAtomicErrorNamesNoTemp: a regular file's failed write names
// the path given, not the temporary file beside it. It replaces the
// package's syncFile, so it must not run in parallel with the tests that
// write files (the race detector caught TestWriteOutputAtomic reading it).
func TestOutputAtomicErrorNamesNoTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	defer func(f func(*os.File) error) { syncFile = f }(syncFile)
	syncFile = func(f *os.File) error { return &os.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO} }
	err := writeOutput(path, []byte("x"))
	if err == nil || strings.Contains(err.Error(), ".tmp-") || strings.Count(err.Error(), path) != 1 || !errors.Is(err, syscall.EIO) {
		t.Errorf("writeOutput = %v; want the path once, no temporary name, EIO", err)
	}
}
