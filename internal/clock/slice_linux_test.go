//go:build linux

package clock

import (
	"runtime"
	"syscall"
	"testing"
)

// onOwnThread runs f on a goroutine locked to a thread that dies with it,
// so what f changes on the thread (nice) leaves the test's threads alone.
// f returns why the test must be skipped, or "".
func onOwnThread(t *testing.T, f func(tid int) (skip string)) {
	t.Helper()
	skip := make(chan string)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		skip <- f(Thread())
	}()
	if why := <-skip; why != "" {
		t.Skip(why)
	}
}

const noSlice = "this kernel has no per-task slice (Linux 6.12 or later)"

func TestShortSliceAndReset(t *testing.T) {
	onOwnThread(t, func(tid int) string {
		before := Slice(tid)
		if !SetShortSlice(tid) {
			return noSlice
		}
		if got := Slice(tid); got != ShortSlice {
			t.Errorf("slice %v after the request, want %v", got, ShortSlice)
		}
		ResetSlice(tid)
		if got := Slice(tid); got != before {
			t.Errorf("slice %v after the reset, want the default %v", got, before)
		}
		return ""
	})
}

// Another thread's slice can be set and reset: the pacer gives it back when
// its goroutine moves to a new thread.
func TestShortSliceOfAnotherThread(t *testing.T) {
	other := make(chan int)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		other <- Thread()
		<-done
	}()
	defer close(done)
	tid := <-other
	before := Slice(tid)
	if !SetShortSlice(tid) {
		t.Skip(noSlice)
	}
	if got := Slice(tid); got != ShortSlice {
		t.Errorf("slice %v after the request, want %v", got, ShortSlice)
	}
	ResetSlice(tid)
	if got := Slice(tid); got != before {
		t.Errorf("slice %v after the reset, want the default %v", got, before)
	}
}

func TestShortSliceKeepsNice(t *testing.T) {
	onOwnThread(t, func(tid int) string {
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, 5); err != nil {
			return "setpriority: " + err.Error()
		}
		if !SetShortSlice(tid) {
			return noSlice
		}
		check := func(when string) {
			// getpriority's raw syscall returns 20 - nice.
			prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
			if err != nil || 20-prio != 5 {
				t.Errorf("%s: nice %d (%v), want 5", when, 20-prio, err)
			}
		}
		check("with the short slice")
		ResetSlice(tid)
		check("after the reset")
		return ""
	})
}

func TestPreciseTimers(t *testing.T) {
	onOwnThread(t, func(int) string {
		before := TimerSlack()
		if !PreciseTimers() {
			return "prctl(PR_SET_TIMERSLACK) refused"
		}
		if got := TimerSlack(); got != 1 {
			t.Errorf("timer slack %v after PreciseTimers, want 1ns", got)
		}
		DefaultTimers()
		if got := TimerSlack(); got != before {
			t.Errorf("timer slack %v after DefaultTimers, want the default %v", got, before)
		}
		return ""
	})
}
