package scheduler

import (
	"testing"
	"time"
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
