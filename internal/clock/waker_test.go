package clock

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestWakerWakesEachAtItsDeadline: goroutines waiting on one Waker for
// deadlines in every order wake no earlier than their deadlines, and
// all of them wake; how late they woke is logged, not judged (the
// machine decides that).
func TestWakerWakesEachAtItsDeadline(t *testing.T) {
	w := NewWaker()
	defer w.Close()
	const n = 200
	start := Now()
	late := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		// Deadlines 0.1 to 20 ms ahead, interleaved so that later
		// waiters often come with earlier deadlines.
		at := start + int64(100*time.Microsecond) + int64((i*7919)%n)*int64(100*time.Microsecond)
		go func() {
			defer wg.Done()
			if !w.Wait(at, nil) {
				t.Errorf("waiter %d: Wait returned false", i)
			}
			late[i] = time.Duration(Now() - at)
		}()
	}
	wg.Wait()
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	if late[0] < 0 {
		t.Fatalf("a waiter woke %s before its deadline", -late[0])
	}
	t.Logf("late: p50 %s, p99 %s, max %s", late[n/2], late[n*99/100], late[n-1])
}

// TestWakerCancelAndClose: a cancelled wait and the waits a Close cuts
// short return false at once; a deadline already past returns true; a
// wait after Close returns false.
func TestWakerCancelAndClose(t *testing.T) {
	w := NewWaker()
	if !w.Wait(Now()-1, nil) {
		t.Fatal("a past deadline: false")
	}
	cancel := make(chan struct{})
	done := make(chan bool)
	go func() { done <- w.Wait(Now()+int64(time.Hour), cancel) }()
	close(cancel)
	if <-done {
		t.Fatal("cancelled wait returned true")
	}
	const n = 5
	results := make(chan bool, n)
	for range n {
		go func() { results <- w.Wait(Now()+int64(time.Hour), nil) }()
	}
	time.Sleep(20 * time.Millisecond) // let them wait (or not: Close is the same either way)
	w.Close()
	for range n {
		select {
		case ok := <-results:
			if ok {
				t.Fatal("a wait Close cut short returned true")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not wake a waiter")
		}
	}
	if w.Wait(Now()+int64(time.Millisecond), nil) {
		t.Fatal("Wait after Close returned true")
	}
	w.Close() // twice is harmless
}

// TestWakerFallsBackToTheRuntimesTimers: without a kernel timer, Wait
// still waits until its deadline.
func TestWakerFallsBackToTheRuntimesTimers(t *testing.T) {
	w := &Waker{}
	at := Now() + int64(2*time.Millisecond)
	if !w.Wait(at, nil) || Now() < at {
		t.Fatal("fallback woke early or returned false")
	}
}

// The waiters' heap gives them back earliest first, whatever the order
// they came in, duplicates included.
func TestWaiterHeapOrder(t *testing.T) {
	var h waiterHeap
	ats := []int64{50, 10, 40, 10, 90, 0, 70, 30, 30, 60, 20, 80}
	for _, at := range ats {
		h.push(waiter{at: at})
	}
	want := append([]int64{}, ats...)
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	for i, at := range want {
		if got := h.pop().at; got != at {
			t.Fatalf("pop %d: %d, want %d", i, got, at)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d left", len(h))
	}
}

// A wait that parks on the Waker allocates nothing once the pool holds a
// wake channel: it used to make a channel and box its waiter into an
// interface each time (two allocations per delayed reply of the
// embedded target). Allocation counts, not time: the garbage collector
// may empty the pool during the runs, so the mean stays under one.
func TestWakerWaitDoesNotAllocate(t *testing.T) {
	testrun.SkipRace(t, "the race detector makes sync.Pool drop what it is given")
	w := NewWaker()
	defer w.Close()
	if w.timer == nil {
		t.Skip("no timerfd: waits use the runtime's timers")
	}
	w.sleeping.Store(true) // every wait parks: none sleeps in SleepUntil itself
	w.Wait(Now()+int64(50*time.Microsecond), nil)
	allocs := testing.AllocsPerRun(200, func() {
		if !w.Wait(Now()+int64(50*time.Microsecond), nil) {
			t.Fatal("Wait returned false")
		}
	})
	if allocs >= 1 {
		t.Errorf("%.2f allocations per wait, want none (under one on average)", allocs)
	}
}
