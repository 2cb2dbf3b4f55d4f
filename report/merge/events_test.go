package merge

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/visibility"
)

// TestMergedShardsEvents: two shards' failover events on the same nodes
// within a second are one, spanning both windows; the windows' failures
// add up.
func TestMergedShardsEvents(t *testing.T) {
	t.Parallel()
	a, b := asTest(t, withTopology()), asTest(t, withTopology())
	b.Events[0].AtS += 0.2
	b.Events[0].Write = &report.EventWindow{StartS: 0.59, EndS: 0.8, UnavailableS: 0.21, Failed: 2, SpikeMs: 50}
	evs, bound, _ := mergeEvents([]report.Test{*a, *b})
	if len(evs) != 2 || bound == nil {
		t.Fatalf("%+v", evs)
	}
	w := evs[0].Write
	if w.StartS != 0.58 || w.EndS != 0.8 || w.UnavailableS != 0.22 || w.Failed != 5 || w.SpikeMs != 50 {
		t.Fatalf("merged window %+v", w)
	}
	if evs[0].Errors["READONLY"] != 6 {
		t.Fatalf("errors %v", evs[0].Errors)
	}
}

// evMs is a millisecond in ns.
const evMs = int64(time.Millisecond)

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
