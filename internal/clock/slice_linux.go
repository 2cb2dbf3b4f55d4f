//go:build linux

package clock

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ShortSlice is the time slice the pacing thread asks for: the shortest the
// kernel grants a fair task.
const ShortSlice = 100 * time.Microsecond

// Thread returns the calling OS thread's id.
func Thread() int { return syscall.Gettid() }

// SetShortSlice asks the kernel to schedule thread tid with ShortSlice as
// its time slice (sched_setattr's sched_runtime for a fair task: Linux 6.12
// and later, no privilege needed), keeping its policy and nice value. Under
// EEVDF a waking task whose slice is shorter than the running task's may
// preempt it at once; with the default slice a thread woken by its timer on
// a CPU that another task took meanwhile waits until that task blocks or a
// scheduler tick ends its slice (4 ms at HZ=250), even while another CPU
// idles.
//
// It reports false, and changes nothing, where the kernel has no per-task
// slice or the thread is not a fair task (chrt).
func SetShortSlice(tid int) bool {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil || (attr.Policy != unix.SCHED_NORMAL && attr.Policy != unix.SCHED_BATCH) {
		return false
	}
	if !setSlice(tid, attr, ShortSlice) {
		return false
	}
	if got, err := unix.SchedGetAttr(tid, 0); err != nil || got.Runtime != uint64(ShortSlice) {
		setSlice(tid, attr, 0) // an older kernel ignores the slice
		return false
	}
	return true
}

// ResetSlice gives thread tid the kernel's default slice again.
func ResetSlice(tid int) {
	if attr, err := unix.SchedGetAttr(tid, 0); err == nil {
		setSlice(tid, attr, 0)
	}
}

// setSlice sets tid's slice (0: the default), keeping attr's policy and
// nice value.
func setSlice(tid int, attr *unix.SchedAttr, slice time.Duration) bool {
	a := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: attr.Policy, Nice: attr.Nice, Runtime: uint64(slice)}
	return unix.SchedSetAttr(tid, &a, 0) == nil
}

// Slice returns thread tid's time slice as the kernel reports it (0 where
// it reports none), for tests.
func Slice(tid int) time.Duration {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0
	}
	return time.Duration(attr.Runtime)
}

// PreciseTimers sets the calling thread's timer slack to 1 ns, so its
// timed sleeps wake at their deadline rather than up to the default 50 µs
// after it, where the kernel may batch them with other timers; it reports
// whether the kernel took it. The slack is the calling thread's own (no
// thread can change another's without CAP_SYS_NICE): DefaultTimers gives
// it back.
func PreciseTimers() bool {
	return unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) == nil
}

// DefaultTimers gives the calling thread its default timer slack back.
func DefaultTimers() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
}

// TimerSlack returns the calling thread's timer slack, for tests.
func TimerSlack() time.Duration {
	n, _, _ := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0, 0, 0, 0)
	return time.Duration(n)
}
