//go:build linux

package clock

import (
	"syscall"
	"time"
	"unsafe"
)

const (
	clockMonotonic = 1
	timerAbstime   = 1
)

// HavePrecise reports whether the precise sleeps below are real.
const HavePrecise = true

// RawSleepUntil sleeps until the clock reaches deadline, or a signal
// interrupts it, with clock_nanosleep(TIMER_ABSTIME) entered as a raw
// syscall: the runtime does not hand the goroutine's P to another thread
// for it, which for sleeps of tens of microseconds would cost more than the
// sleep. The goroutine keeps its P, so only one goroutine (the pacer)
// should use it, and it must return to Go code after each call so that
// preemption requests are honoured.
func RawSleepUntil(deadline int64) {
	ts := syscall.NsecToTimespec(deadline)
	syscall.RawSyscall6(syscall.SYS_CLOCK_NANOSLEEP, clockMonotonic, timerAbstime,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}

// SleepUntil blocks the calling goroutine until deadline with microsecond
// precision, for any number of goroutines: long waits use the runtime's
// timers, the last millisecond a blocking clock_nanosleep (which releases
// the P while the thread sleeps), on a thread whose timer slack it first
// sets to 1 ns (PreciseTimers: the default 50 µs let the sleep end up to
// 50 µs late). The slack stays on the thread; a goroutine that changes
// threads between the two calls sleeps once with the thread's slack.
func SleepUntil(deadline int64) {
	for {
		left := deadline - nanotime()
		switch {
		case left <= 0:
			return
		case left > int64(2*time.Millisecond):
			time.Sleep(time.Duration(left) - time.Millisecond)
		default:
			PreciseTimers()
			ts := syscall.NsecToTimespec(deadline)
			syscall.Syscall6(syscall.SYS_CLOCK_NANOSLEEP, clockMonotonic, timerAbstime,
				uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		}
	}
}
