//go:build linux

package scheduler

import (
	"syscall"
	"unsafe"
)

const (
	clockMonotonic = 1
	timerAbstime   = 1
)

// preciseSleepUntil sleeps until the monotonic clock reaches deadline (or a
// signal interrupts it) with clock_nanosleep(TIMER_ABSTIME). It is entered
// as a raw syscall: the runtime does not hand the P off or wake a spare
// thread for it, which for sleeps of tens of microseconds would cost more
// than the sleep. The caller must be on a locked OS thread and return to Go
// code after each call, so that preemption requests are honoured.
func preciseSleepUntil(deadline int64) {
	ts := syscall.NsecToTimespec(deadline)
	syscall.RawSyscall6(syscall.SYS_CLOCK_NANOSLEEP, clockMonotonic, timerAbstime,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}

const havePreciseSleep = true
