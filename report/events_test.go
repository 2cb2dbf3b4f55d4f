package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/visibility"
)

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

// TestEventsInTheReport: the events, the visibility lag and the WAITs in
// the JSON (windows as offsets, the intervals marked) and in the text's
// sections, the same after the document is read back.
func TestEventsInTheReport(t *testing.T) {
	t.Parallel()
	rt := asTest(t, withTopology(), nil)
	if len(rt.Events) != 2 || rt.EventBoundMs == nil || *rt.EventBoundMs != 2 {
		t.Fatalf("events %+v bound %v", rt.Events, rt.EventBoundMs)
	}
	e := rt.Events[0]
	if e.Kind != "failover" || e.AtS != 0.6 || e.Write == nil || e.Write.StartS != 0.58 || e.Write.EndS != 0.7 || e.Write.UnavailableS != 0.12 ||
		e.Write.Failed != 3 || e.Write.SpikeMs != 45 || e.Read.UnavailableS != 0 {
		t.Fatalf("failover %+v write %+v", e, e.Write)
	}
	if s := rt.Events[1].Slots; len(s) != 2 || s[0] != [2]uint16{0, 99} || rt.Events[1].Read != nil {
		t.Fatalf("slots %+v", rt.Events[1])
	}
	if got := [][]int{rt.Intervals[0].Events, rt.Intervals[1].Events, rt.Intervals[2].Events}; len(got[0]) != 0 || len(got[1]) != 2 || len(got[2]) != 0 {
		t.Fatalf("intervals marked %v, want both events in the second", got)
	}
	if v := rt.Visibility; v == nil || len(v.Replicas) != 2 || v.Replicas[1].Lost != 1 || v.Replicas[1].VisibilityMs.P99 < 290 {
		t.Fatalf("visibility %+v", v)
	}
	if w := rt.Wait; w == nil || w.Sent != 5000 || w.Short != 10 || w.TimeoutMs != 100 || w.LatencyMs == nil {
		t.Fatalf("wait %+v", w)
	}
	var text bytes.Buffer
	if err := Text(&text, rt, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	testrun.Contains(t, text.String(), "events (a request counts against one when it failed or took over 2.000 ms)",
		"0.600 s  failover     m: 127.0.0.1:7001 -> 127.0.0.1:7002", "seen +switch-master, READONLY (3)",
		"writes: unavailable 0.120 s (0.580–0.700 s), 3 failed, spike 45.000 ms", "reads:  served throughout",
		"slots 0-99, 200", "reads:  none sent around it",
		"visibility lag (100 probes/s", "127.0.0.1:7004", "WAIT 1 100 after every write: 5000 sent, 4990 acked, 10 short")
	doc := craftDoc("open", *rt)
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadDocument(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := Text(&again, &back.Tests[0], TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if section := func(s string) string { return testrun.Section(s, "  events") }; section(again.String()) != section(text.String()) {
		t.Errorf("read back, the events print otherwise:\n%s\nwant\n%s", section(again.String()), section(text.String()))
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	tj := raw["tests"].([]any)[0].(map[string]any)
	for _, k := range []string{"events", "event_bound_ms", "visibility", "wait"} {
		if _, ok := tj[k]; !ok {
			t.Errorf("the JSON has no %q", k)
		}
	}
}

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

// TestMergedShardsEvents: two shards' failover events on the same nodes
// within a second are one, spanning both windows; the windows' failures
// add up.
func TestMergedShardsEvents(t *testing.T) {
	t.Parallel()
	a, b := asTest(t, withTopology(), nil), asTest(t, withTopology(), nil)
	b.Events[0].AtS += 0.2
	b.Events[0].Write = &EventWindow{StartS: 0.59, EndS: 0.8, UnavailableS: 0.21, Failed: 2, SpikeMs: 50}
	evs, bound, _ := mergeEvents([]Test{*a, *b})
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
