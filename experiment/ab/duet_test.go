package ab

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/timeline"
)

// Both sides of a meeting learn the same start, DuetLead after the later
// one came; a side left waiting when ctx ends is let go.
func TestMeetingGivesBothOneStart(t *testing.T) {
	t.Parallel()
	m := &meeting{}
	var starts [2]time.Time
	var oks [2]bool
	var wg sync.WaitGroup
	before := time.Now()
	for s := range 2 {
		wg.Go(func() { starts[s], oks[s] = m.at(context.Background()) })
	}
	wg.Wait()
	if !oks[0] || !oks[1] || !starts[0].Equal(starts[1]) || starts[0].Before(before.Add(DuetLead)) {
		t.Fatalf("starts %v (ok %v), want one start at least %s after %v", starts, oks, DuetLead, before)
	}
	// The meeting is used again for the next part.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { _, ok := m.at(ctx); done <- ok }()
	cancel()
	if ok := <-done; ok {
		t.Error("a side waiting alone met nobody, yet was given a start")
	}
}

// A duet runs both sides of each round at once: their timelines start at
// one instant (the same T0 on this process's clock, the same planned
// start), each sends its first request right after it, and each round's
// runs are seen A then B.
func TestDuetRunsBothSidesAtOnce(t *testing.T) {
	t.Parallel()
	_, _, sides := embeddedSides(t)
	tests := []experiment.Test{experiment.Command("ping", "PING", "PING")}
	round := time.Second
	for _, loop := range []string{"open", "closed"} {
		cfg := Config{Tests: tests, Rounds: 2, RoundDuration: round, Warmup: 100 * time.Millisecond, Conns: 2, Seed: 5,
			Interval: 100 * time.Millisecond, Duet: true}
		if loop == "open" {
			cfg.Open = &Open{Rate: timeline.RatePerSecond(500), Arrival: "uniform"}
		} else {
			cfg.Closed = &Closed{Pipeline: 1}
		}
		var seen []Run
		res := Measure(context.Background(), sides, cfg, func(r Run) { seen = append(seen, r) }, nil)
		if res.Err != nil || res.Interrupted {
			t.Fatalf("%s: err %v, interrupted %v", loop, res.Err, res.Interrupted)
		}
		if len(seen) != 4 {
			t.Fatalf("%s: %d runs seen, want 4", loop, len(seen))
		}
		for i := 0; i < 4; i += 2 {
			ra, rb := seen[i], seen[i+1]
			if ra.Side != A || rb.Side != B || ra.Round != i/2 || rb.Round != i/2 {
				t.Errorf("%s: runs seen as %+v then %+v, want round %d's A then B", loop, ra, rb, i/2)
			}
			if !ra.Result.Started.Equal(rb.Result.Started) || ra.Result.Started.IsZero() {
				t.Errorf("%s round %d: started at %v and %v, want one planned start", loop, i/2, ra.Result.Started, rb.Result.Started)
			}
			if loop != "open" {
				continue
			}
			if d := ra.Result.T0 - rb.Result.T0; d < -int64(time.Millisecond) || d > int64(time.Millisecond) {
				t.Errorf("round %d: the timelines started %s apart", i/2, time.Duration(d))
			}
			// One after the other, B's first send would come a whole run
			// (warm-up and measured part) after A's.
			for _, r := range []Run{ra, rb} {
				if late := time.Duration(r.Result.FirstWrite - r.Result.T0); late < 0 || late > round/2 {
					t.Errorf("round %d side %s: first request %s after the shared start", i/2, SideName(r.Side), late)
				}
			}
		}
		for s := range 2 {
			if n := res.Runs[s][0].Len(); n != 2 {
				t.Errorf("%s side %s: %d runs kept, want 2", loop, SideName(s), n)
			}
		}
	}
}

// A duet whose candidate cannot be reached ends with that side's error,
// and the baseline's run of the round, started beside it, does not go on
// alone for its whole duration.
func TestDuetEndsWithASideThatFails(t *testing.T) {
	t.Parallel()
	_, sides := sidesWithBGone(t)
	cfg := Config{Tests: []experiment.Test{experiment.Command("ping", "PING", "PING")}, Rounds: 2,
		RoundDuration: time.Hour, Conns: 1, Seed: 1, Interval: time.Second, Duet: true,
		Open: &Open{Rate: timeline.RatePerSecond(100), Arrival: "uniform"}}
	done := make(chan *Result, 1)
	go func() { done <- Measure(context.Background(), sides, cfg, nil, nil) }()
	select {
	case res := <-done:
		if res.Err == nil {
			t.Fatalf("no error from a side that cannot be reached: %+v", res)
		}
		if n := res.Runs[B][0].Len(); n != 0 {
			t.Errorf("side b kept %d runs", n)
		}
		if runs := res.Runs[A][0].List(); len(runs) > 1 || (len(runs) == 1 && !runs[0].Interrupted) {
			t.Errorf("side a's run of the round was not ended with b's: %d runs", len(runs))
		}
	case <-time.After(time.Minute): // a bound on a hang, not a timing: the round would take an hour
		t.Fatal("side a's run went on without side b")
	}
}
