package clock

import (
	"sync/atomic"
	"testing"
	"time"
)

// Every calls f until f says to end, and stop then returns at once.
func TestEveryEndsWhenFSays(t *testing.T) {
	var calls atomic.Int32
	stop := Every(time.Millisecond, func() bool { return calls.Add(1) < 3 })
	for calls.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	stop()
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
}

// After stop returns, f is not called again.
func TestEveryStopWaits(t *testing.T) {
	var calls atomic.Int32
	stop := Every(time.Millisecond, func() bool { calls.Add(1); return true })
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	stop()
	n := calls.Load()
	time.Sleep(5 * time.Millisecond)
	if m := calls.Load(); m != n {
		t.Fatalf("%d calls after stop returned", m-n)
	}
}
