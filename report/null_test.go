package report

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// TestNoSamplesIsNull: a test, a command of a mix and an interval with no
// latency samples have null summaries in the JSON, not zeros; an interval
// with samples has them.
func TestNoSamplesIsNull(t *testing.T) {
	t.Parallel()
	empty, err := histo.Pack(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := histo.NewRecorder()
	rec.Record(2_000_000)
	full, err := histo.Pack(rec.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	ivs := []scheduler.Interval{
		{Duration: time.Second, Counts: scheduler.Counts{Scheduled: 1, Sent: 1, Errors: 1}, Response: empty, Service: empty, Lag: full},
		{Start: time.Second, Duration: time.Second, Counts: scheduler.Counts{Scheduled: 1, Sent: 1, Completed: 1}, Response: full, Service: full, Lag: full},
	}
	for _, mode := range []string{"open", "closed"} {
		r := &scheduler.Result{
			Name: "MIX get:1,set:1", Mode: mode, Window: 2 * time.Second,
			Counts:   scheduler.Counts{Scheduled: 2, Sent: 2, Completed: 1, Errors: 1},
			Response: histo.New(), Service: histo.New(),
			Interval: time.Second, Intervals: ivs,
			Commands: []scheduler.CommandResult{{Name: "get", Counts: scheduler.Counts{Scheduled: 1, Sent: 1, Errors: 1},
				Response: histo.New(), Service: histo.New(), Intervals: ivs[:1]}},
		}
		if mode == "open" {
			r.Lag = histo.New()
			r.Commands[0].Lag = histo.New()
		}
		tt, err := fromResult(r, true)
		if err != nil {
			t.Fatal(err)
		}
		m := jsonObject(t, tt)
		cmd := m["commands"].(map[string]any)["get"].(map[string]any)
		testIvs, cmdIvs := m["intervals"].([]any), cmd["intervals"].([]any)
		for where, obj := range map[string]any{"test": m, "command": cmd, "interval 0": testIvs[0], "command interval 0": cmdIvs[0]} {
			o := obj.(map[string]any)
			keys := []string{"response_ms", "service_ms", "send_lag_ms"}
			if strings.Contains(where, "interval") && mode == "open" {
				keys = keys[:2] // the interval's requests were sent: it has a send lag
				if o["send_lag_ms"] == nil {
					t.Errorf("%s %s: send_lag_ms null, want the sent request's lag", mode, where)
				}
			}
			for _, k := range keys {
				if v, ok := o[k]; !ok || v != nil {
					t.Errorf("%s %s: %s = %v, want null", mode, where, k, v)
				}
			}
		}
		if s, ok := testIvs[1].(map[string]any)["response_ms"].(map[string]any); !ok || s["p50"].(float64) < 1.99 || s["p50"].(float64) > 2.01 {
			t.Errorf("%s: interval 1 response_ms %v, want its sample", mode, testIvs[1])
		}
	}
}
