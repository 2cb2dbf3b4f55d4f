package experiment

import (
	"io"
	"testing"

	"github.com/pacer-load/pacer/scheduler"
)

// TestWatchersHook: the hook sees the run and wraps what the watchers
// feed; stopping the watch ends the hook's watch too.
func TestWatchersHook(t *testing.T) {
	var seen Watched
	ended := false
	w := Watchers(io.Discard, true, func(run Watched, also func(*scheduler.Live)) (func(*scheduler.Live), func()) {
		seen = run
		return also, func() { ended = true }
	})
	onStart, stop := w(Watched{Name: "GET", Test: "GET", Mode: "closed"})
	if onStart == nil || seen.Test != "GET" {
		t.Fatalf("hook saw %+v", seen)
	}
	stop()
	if !ended {
		t.Error("stop did not end the hook's watch")
	}
	if onStart, stop := Watchers(io.Discard, true, nil)(Watched{Mode: "closed"}); onStart == nil {
		t.Error("no hook: want the watchers' own onStart")
	} else {
		stop()
	}
}
