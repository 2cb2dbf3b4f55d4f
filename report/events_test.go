package report

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/visibility"
)

const evMs = int64(time.Millisecond)

// TestUnavailableClause: --slo unavailable<=… judges the longest window
// of any event, writes or reads; a test without events passes it.
func TestUnavailableClause(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec string
		pass bool
		r    *scheduler.Result
	}{
		{"unavailable<=200ms", true, withTopology()},
		{"unavailable<100ms", false, withTopology()},
		{"unavailable<=0s", true, sample()},
	} {
		res := mustCheck(t, mustSLO(t, c.spec, 0), c.r)
		if res.Pass != c.pass {
			t.Errorf("%s: pass %v, want %v: %+v", c.spec, res.Pass, c.pass, res.Violations)
		}
		if c.r.Events != nil {
			cr := res.Clauses[0]
			if cr.Observed == nil || *cr.Observed != 0.12 || cr.Unit != "s" {
				t.Errorf("%s: observed %v %s, want the 0.120 s window", c.spec, cr.Observed, cr.Unit)
			}
		}
	}
	if !strings.Contains(mustCheck(t, mustSLO(t, "unavailable<100ms", 0), withTopology()).Violations[0], "unavailable 0.120 s >= 0.100 s") {
		t.Error("the violation does not word the window")
	}
	if _, err := parseSLO("unavailable<=x"); err == nil {
		t.Error("unavailable<=x accepted")
	}
}

// withTopology is sample() with a failover event whose writes were
// unavailable for 120 ms, a slot move that cost nothing, visibility
// probes on two replicas and WAITs, over three intervals.
func withTopology() *scheduler.Result {
	r := sample()
	r.Interval = 500 * time.Millisecond
	r.Intervals = []scheduler.Interval{{Start: 0, Duration: 500 * time.Millisecond}, {Start: 500 * time.Millisecond, Duration: 500 * time.Millisecond},
		{Start: time.Second, Duration: 250 * time.Microsecond}}
	r.EventBound = 2 * time.Millisecond
	r.Events = []events.Event{
		{Kind: events.Failover, At: 600 * evMs, Last: 610 * evMs, Nodes: []string{"127.0.0.1:7001", "127.0.0.1:7002"},
			Errors: map[string]uint64{"READONLY": 3}, Seen: []string{"+switch-master", "READONLY"}, Detail: "m: 127.0.0.1:7001 -> 127.0.0.1:7002",
			Write: &events.Window{Start: 580 * evMs, End: 700 * evMs, Failed: 3, Worst: 45 * evMs}, Read: &events.Window{Start: 600 * evMs, End: 600 * evMs}},
		{Kind: events.SlotsMoved, At: 900 * evMs, Last: 900 * evMs, Nodes: []string{"127.0.0.1:7002"}, Slots: []events.SlotRange{{Lo: 0, Hi: 99}, {Lo: 200, Hi: 200}},
			Write: &events.Window{Start: 900 * evMs, End: 900 * evMs}},
	}
	lag := func(base int64) *histo.Recorder {
		h := histo.NewRecorder()
		for i := int64(1); i <= 100; i++ {
			h.Record(base * i)
		}
		return h
	}
	a, b := lag(10_000), lag(3_000_000)
	r.Visibility = &visibility.Result{Rate: 100, Probes: 100, Write: lag(1000).Snapshot(), Interval: r.Interval, Replicas: []visibility.Replica{
		{Addr: "127.0.0.1:7003", Seen: 100, Lag: a.Snapshot()}, {Addr: "127.0.0.1:7004", Seen: 99, Lost: 1, Lag: b.Snapshot()}}}
	r.Wait = &scheduler.WaitResult{Wait: scheduler.Wait{Replicas: 1, Timeout: 100 * time.Millisecond}, Sent: 5000, Acked: 4990, Short: 10,
		Latency: lag(50_000).Snapshot()}
	return r
}
