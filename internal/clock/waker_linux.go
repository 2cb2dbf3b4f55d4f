//go:build linux

package clock

import (
	"syscall"
	"unsafe"
)

// timerFD is a CLOCK_MONOTONIC timerfd set with absolute instants (the
// Now clock is the runtime's monotonic clock) and read blocking, by the
// Waker's own thread: the kernel wakes that thread when the timer fires,
// however busy the runtime's processors are (a timerfd in the netpoller
// is noticed only when a processor runs out of work).
type timerFD struct{ fd int }

const tfdAbstime = 1

func newKernelTimer() (kernelTimer, error) {
	fd, _, e := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, syscall.O_CLOEXEC, 0)
	if e != 0 {
		return nil, e
	}
	return &timerFD{fd: int(fd)}, nil
}

func (t *timerFD) set(at int64) error {
	// An instant of 0 would disarm the timer: the earliest is 1 ns.
	spec := [2]syscall.Timespec{{}, syscall.NsecToTimespec(max(at, 1))}
	if _, _, e := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(t.fd), tfdAbstime, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

func (t *timerFD) wait() error {
	var buf [8]byte
	for {
		_, err := syscall.Read(t.fd, buf[:])
		if err != syscall.EINTR {
			return err
		}
	}
}

func (t *timerFD) close() error { return syscall.Close(t.fd) }
