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
		{Precise, time.Millisecond, 0},          // a wake at every due instant, whatever the budget
		{Coarse, 250 * us, CoarseQuantum},       // coarse keeps its quantum even under a tight budget
		{Coarse, time.Second, CoarseQuantum},    // and under a loose one
		{Auto, time.Millisecond, 333 * us},      // the default budget: a third, to the µs
		{Auto, 600 * us, 200 * us},              // a third exactly
		{Auto, 300 * us, MinAutoQuantum},        // a third at the floor is still a quantum
		{Auto, 299 * us, 0},                     // below the floor: precise
		{Auto, 250 * us, 0},                     // the tight budget: precise
		{Auto, 2400 * us, CoarseQuantum},        // a third reaches coarse's quantum
		{Auto, 10 * time.Second, CoarseQuantum}, // never coarser than coarse
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
	// Auto's default budget is precise's; its quantum then leaves two
	// thirds of it to the wake's lateness.
	if got := DefaultLagLimit(Auto); got != time.Millisecond {
		t.Fatalf("DefaultLagLimit(Auto) = %v, want 1ms", got)
	}
}
