package ab

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/timeline"
)

// A session says in one line what it runs, names its loop, and echoes its
// own settings under "ab" in each side's config.
func TestPlanModeAndEcho(t *testing.T) {
	open := Config{Rounds: 2, RoundDuration: 5 * time.Second, Warmup: time.Second, Conns: 50,
		Open: &Open{Rate: timeline.RatePerSecond(10000), Arrival: "uniform"}}
	if got, want := open.Plan(), "2 rounds of 5s (after 1s warm-up each), 10000 req/s uniform, 50 connections, in the order "+OrderText(2); got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	closed := Config{Rounds: 1, RoundDuration: time.Second, Conns: 8, Closed: &Closed{Pipeline: 16}}
	if got, want := closed.Plan(), "1 rounds of 1s (after 0s warm-up each), closed loop, -P 16, 8 connections, in the order "+OrderText(1); got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	if open.Mode() != "open" || closed.Mode() != "closed" {
		t.Errorf("modes %q and %q", open.Mode(), closed.Mode())
	}
	e := open.Echo("s1", B, [2]string{"127.0.0.1:1", "127.0.0.1:2"}, true)
	for k, want := range map[string]any{"session": "s1", "side": "b", "a": "127.0.0.1:1", "b": "127.0.0.1:2",
		"rounds": 2, "round_duration_s": 5.0, "warmup_s": 1.0, "order": OrderText(2), "fill": true} {
		if e[k] != want {
			t.Errorf("echo %s = %v, want %v", k, e[k], want)
		}
	}
	if len(e) != 9 {
		t.Errorf("echo has %d keys, want 9: %v", len(e), e)
	}
	duet := open
	duet.Duet = true
	if got, want := duet.Plan(), "2 rounds of 5s (after 1s warm-up each), 10000 req/s uniform, 50 connections, both sides of a round at once (duet)"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	if e := duet.Echo("s1", A, [2]string{"x", "y"}, false); e["order"] != "duet" || e["duet"] != true || len(e) != 10 {
		t.Errorf("a duet's echo %v", e)
	}
}
