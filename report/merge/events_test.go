package merge

import (
	"testing"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/report"
)

// TestMergedShardsEvents: two shards' failover events on the same nodes
// within a second are one, spanning both windows; the windows' failures
// add up.
func TestMergedShardsEvents(t *testing.T) {
	t.Parallel()
	a, b := reporttest.AsTest(t, resulttest.WithTopology()), reporttest.AsTest(t, resulttest.WithTopology())
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
