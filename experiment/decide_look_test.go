package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// TestLookCountsTheOpenRequests: a look passes, and ends the run, only
// when its pass holds whatever the requests still open at the look take.
// Three seconds of 1,000 requests at 0.5 ms against p99<=1ms pass; 40
// requests more intended and not answered yet (more than 1% of what was
// intended) could be the slowest, so the first look goes on and says
// why; 5 open (0.16%) cannot move the p99 past the bound.
func TestLookCountsTheOpenRequests(t *testing.T) {
	slo, err := verdict.ParseSLO("p99<=1ms")
	if err != nil {
		t.Fatal(err)
	}
	packed := func(n int, v time.Duration) histo.Packed {
		h := histo.New()
		if err := h.RecordValues(int64(v), int64(n)); err != nil {
			t.Fatal(err)
		}
		p, err := histo.Pack(h)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	intervals := func(open uint64) []scheduler.Interval {
		var ivs []scheduler.Interval
		for i := range 3 {
			iv := scheduler.Interval{Start: time.Duration(i) * time.Second, Duration: time.Second,
				Counts:   scheduler.Counts{Scheduled: 1000, Sent: 1000, Completed: 1000},
				Response: packed(1000, 500*time.Microsecond), Service: packed(1000, 300*time.Microsecond),
				Lag: packed(1000, 20*time.Microsecond), Receive: packed(1000, 10*time.Microsecond)}
			if i == 2 {
				iv.Counts.Scheduled += open
				iv.Counts.Sent += open
				iv.InFlight = open
			}
			ivs = append(ivs, iv)
		}
		return ivs
	}
	for _, c := range []struct {
		open   uint64
		decide bool
	}{{0, true}, {5, true}, {40, false}} {
		k := &decider{d: Decide{SLO: slo}, plan: decidePlan{looks: 3},
			proto: &scheduler.Result{Name: "get", Mode: "open", TargetRate: timeline.RatePerSecond(1000), Connections: 1, Interval: time.Second, ReceiveClock: scheduler.ReceiveKernel},
			ext:   scheduler.Extension{PlannedLooks: 3}}
		if got := k.look(intervals(c.open)); got != c.decide {
			t.Errorf("%d open: the look ended the run %v, want %v (went on because %q)", c.open, got, c.decide, k.ext.WentOn)
		}
		if !c.decide && !strings.Contains(k.ext.WentOn, "40 of the 3040 requests intended so far had no reply yet") {
			t.Errorf("%d open: went on because %q", c.open, k.ext.WentOn)
		}
	}
}
