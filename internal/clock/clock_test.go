package clock

import (
	"testing"
	"time"
)

func TestNowIsMonotonicAndTicks(t *testing.T) {
	a := Now()
	time.Sleep(time.Millisecond)
	if b := Now(); b <= a {
		t.Fatalf("clock went from %d to %d", a, b)
	}
}

func TestSleepUntilNeverWakesEarly(t *testing.T) {
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 3 * time.Millisecond} {
		deadline := Now() + int64(d)
		SleepUntil(deadline)
		if Now() < deadline {
			t.Fatalf("woke before a %v deadline", d)
		}
	}
}
