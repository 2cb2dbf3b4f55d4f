package openloop

import (
	"runtime"
	"testing"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// kernelHasSlice reports whether this kernel gives a thread the slice it
// asks for, trying on a throwaway locked thread.
func kernelHasSlice() bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid := clock.Thread()
		granted := clock.SetShortSlice(tid)
		clock.ResetSlice(tid)
		ok <- granted
	}()
	return <-ok
}

// The thread running the pacer holds a short time slice (see sliceHolder).
// With the default slice, a wake after a sleep waited whenever another task
// had taken the CPU meanwhile, until that task's slice ended (up to a 4 ms
// scheduler tick): arrivals that sleep often (Poisson) got a send-lag p99
// above 1 ms at 10k/s.
func TestPacerThreadHasAShortSlice(t *testing.T) {
	if !kernelHasSlice() {
		t.Skip("this kernel has no per-task slice (Linux 6.12 or later)")
	}
	for _, pacing := range []scheduler.Pacing{scheduler.Precise, scheduler.Coarse, scheduler.Auto} {
		cmds, n := drivertest.PingStream(t)
		srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
		rate := timeline.RatePerSecond(2000)
		sleeps, short, precise := 0, 0, 0
		res := runOpen(t, srv.Dial(t, 2, 0), cmds, Config{
			Timeline: timeline.NewPoisson(rate, 1), Rate: rate, Requests: 20, Pacing: pacing,
			beforeSleep: func() {
				sleeps++
				if clock.Slice(clock.Thread()) == clock.ShortSlice {
					short++
				}
				if clock.TimerSlack() == 1 {
					precise++
				}
			},
		})
		if res.Counts.Completed != 20 {
			t.Fatalf("%s: counts %+v", pacing, res.Counts)
		}
		// The goroutine may change threads between taking the slice and
		// sleeping (the next wake takes it again), and a starved machine
		// may run the whole timeline late without a sleep: most sleeps,
		// not all, must be on the short slice.
		if sleeps < 5 {
			t.Logf("%s: only %d sleeps (a loaded machine): nothing to check", pacing, sleeps)
			continue
		}
		if 2*short <= sleeps {
			t.Errorf("%s: the pacing thread had the short slice in %d of %d sleeps", pacing, short, sleeps)
		}
		if 2*precise <= sleeps {
			t.Errorf("%s: the pacing thread had a 1 ns timer slack in %d of %d sleeps", pacing, precise, sleeps)
		}
	}
}

// The short slice follows the pacer's goroutine from thread to thread, and
// the threads it leaves get the default slice back.
func TestSliceHolderMovesWithTheThread(t *testing.T) {
	if !kernelHasSlice() {
		t.Skip("this kernel has no per-task slice (Linux 6.12 or later)")
	}
	var h sliceHolder
	// onThread runs f on a fresh locked thread and returns the thread's id.
	onThread := func(f func()) int {
		tid := make(chan int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			f()
			tid <- clock.Thread()
		}()
		return <-tid
	}
	def := clock.Slice(onThread(func() {}))
	a := onThread(h.hold)
	if got := clock.Slice(a); got != clock.ShortSlice {
		t.Fatalf("first thread's slice %v, want %v", got, clock.ShortSlice)
	}
	b := onThread(h.hold)
	if got := clock.Slice(b); got != clock.ShortSlice {
		t.Fatalf("second thread's slice %v, want %v", got, clock.ShortSlice)
	}
	if got := clock.Slice(a); a != b && got != def {
		t.Fatalf("the thread left behind kept a %v slice, want the default %v", got, def)
	}
	h.release()
	if got := clock.Slice(b); got != def {
		t.Fatalf("after release the slice is %v, want the default %v", got, def)
	}
}
