//go:build linux

package clock

import (
	"os"
	"syscall"
	"unsafe"
)

// timerFD is a CLOCK_MONOTONIC timerfd, non-blocking, read through the
// netpoller (os.File), set with absolute instants: the Now clock is the
// runtime's monotonic clock.
type timerFD struct {
	f  *os.File
	fd uintptr
}

const (
	tfdNonblock = syscall.O_NONBLOCK
	tfdCloexec  = syscall.O_CLOEXEC
	tfdAbstime  = 1
)

func newKernelTimer() (kernelTimer, error) {
	fd, _, e := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if e != 0 {
		return nil, e
	}
	return &timerFD{f: os.NewFile(fd, "timerfd"), fd: fd}, nil
}

func (t *timerFD) set(at int64) error {
	// An instant of 0 would disarm the timer: the earliest is 1 ns.
	spec := [2]syscall.Timespec{{}, syscall.NsecToTimespec(max(at, 1))}
	if _, _, e := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, t.fd, tfdAbstime, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

func (t *timerFD) wait() error {
	var buf [8]byte
	_, err := t.f.Read(buf[:])
	return err
}

func (t *timerFD) close() error { return t.f.Close() }
