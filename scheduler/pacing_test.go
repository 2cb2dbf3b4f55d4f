package scheduler

import (
	"runtime"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/timeline"
)

func TestPacingQuantum(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		pacing   Pacing
		lagLimit time.Duration
		want     time.Duration
	}{
		{Precise, time.Millisecond, 0},              // a wake at every due instant, whatever the budget
		{Coarse, 250 * us, CoarseQuantum},           // coarse keeps its quantum even under a tight budget
		{Coarse, time.Second, CoarseQuantum},        // and under a loose one
		{Auto, time.Millisecond, 600 * us},          // the default budget less the wake's reserve
		{Auto, 1000400 * time.Nanosecond, 600 * us}, // rounded down to the µs
		{Auto, 700 * us, 300 * us},                  // the budget less the reserve, exactly
		{Auto, 500 * us, MinAutoQuantum},            // at the floor is still a quantum
		{Auto, 499 * us, 0},                         // below the floor: precise
		{Auto, 250 * us, 0},                         // the tight budget: precise
		{Auto, 100 * us, 0},                         // a budget smaller than the reserve: precise
		{Auto, 1200 * us, CoarseQuantum},            // reaches coarse's quantum
		{Auto, 10 * time.Second, CoarseQuantum},     // never coarser than coarse
	} {
		if got := c.pacing.Quantum(c.lagLimit); got != c.want {
			t.Errorf("%s with lag limit %v: quantum %v, want %v", c.pacing, c.lagLimit, got, c.want)
		}
	}
}

func TestParsePacing(t *testing.T) {
	for _, p := range []Pacing{Precise, Coarse, Auto} {
		if got, ok := ParsePacing(p.String()); !ok || got != p {
			t.Errorf("ParsePacing(%q) = %v, %v", p.String(), got, ok)
		}
	}
	if _, ok := ParsePacing("fast"); ok {
		t.Error(`ParsePacing("fast") accepted`)
	}
}

func TestDefaultLagLimitOfAuto(t *testing.T) {
	// Auto's default budget is precise's; its quantum then leaves
	// WakeReserve of it to the wake's lateness.
	if got := DefaultLagLimit(Auto); got != time.Millisecond {
		t.Fatalf("DefaultLagLimit(Auto) = %v, want 1ms", got)
	}
}

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
	for _, pacing := range []Pacing{Precise, Coarse, Auto} {
		cmds, n := pingStream(t)
		srv := newFakeServer(t, n, func(int) ([]byte, bool) { return pong, false })
		rate := timeline.RatePerSecond(2000)
		sleeps, short := 0, 0
		res := runOpen(t, srv.dial(t, 2, 0), cmds, OpenConfig{
			Timeline: timeline.NewPoisson(rate, 1), Rate: rate, Requests: 20, Pacing: pacing,
			beforeSleep: func() {
				sleeps++
				if clock.Slice(clock.Thread()) == clock.ShortSlice {
					short++
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
