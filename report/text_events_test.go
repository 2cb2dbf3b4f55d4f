package report_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	reporttext "github.com/pacer-load/pacer/report/text"
)

// TestEventsInTheReport: the events, the visibility lag and the WAITs in
// the JSON (windows as offsets, the intervals marked) and in the text's
// sections, the same after the document is read back.
func TestEventsInTheReport(t *testing.T) {
	t.Parallel()
	rt := report.AsTest(t, resulttest.WithTopology(), nil)
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
	if err := reporttext.Text(&text, rt, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	testrun.Contains(t, text.String(), "events (a request counts against one when it failed or took over 2.000 ms)",
		"0.600 s  failover     m: 127.0.0.1:7001 -> 127.0.0.1:7002", "seen +switch-master, READONLY (3)",
		"writes: unavailable 0.120 s (0.580–0.700 s), 3 failed, spike 45.000 ms", "reads:  served throughout",
		"slots 0-99, 200", "reads:  none sent around it",
		"visibility lag (100 probes/s", "127.0.0.1:7004", "WAIT 1 100 after every write: 5000 sent, 4990 acked, 10 short")
	doc := report.CraftDoc("open", *rt)
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadDocument(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := reporttext.Text(&again, &back.Tests[0], report.TextOptions{}); err != nil {
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
