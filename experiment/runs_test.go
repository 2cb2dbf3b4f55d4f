package experiment

import (
	"reflect"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// run is a crafted open run of n requests of ms milliseconds each.
func run(n int, ms int64) *scheduler.Result {
	resp, serv, lag := histo.New(), histo.New(), histo.New()
	for range n {
		_ = resp.RecordValue(ms * 1e6)
		_ = serv.RecordValue(ms * 1e6)
		_ = lag.RecordValue(1000)
	}
	return &scheduler.Result{Name: "GET", Mode: "open", TargetRate: timeline.RatePerSecond(1000),
		Counts:   scheduler.Counts{Scheduled: uint64(n), Sent: uint64(n), Completed: uint64(n)},
		Window:   time.Duration(n) * time.Millisecond,
		Response: resp, Service: serv, Lag: lag, LagLimit: time.Millisecond}
}

// TestRunsPoolAsScheduler: kept or merged as they come, runs pool into
// the same test as scheduler.Pool, with the server's counts summed, the
// runs left as they were, and the repeats' summary only when kept.
func TestRunsPoolAsScheduler(t *testing.T) {
	a, b, c := run(1000, 1), run(500, 3), run(2000, 2)
	want, _, err := verdict.NewTest(scheduler.Pool([]*scheduler.Result{a, b, c}), report.TestOptions{ID: "get", Percentiles: true}, verdict.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		r := Runs{Keep: keep}
		for _, x := range []*scheduler.Result{a, b, c} {
			r.Add(x, &serverinfo.Stats{Available: true, Commands: map[string]serverinfo.Command{"get": {Calls: 10}}})
		}
		if r.Len() != 3 || (r.List() != nil) != keep {
			t.Fatalf("keep %v: %d runs, list %d", keep, r.Len(), len(r.List()))
		}
		got, _, err := r.Test("GET", report.TestOptions{ID: "get", Percentiles: true}, verdict.SLO{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Counts != want.Counts || !reflect.DeepEqual(got.ResponsePercentiles, want.ResponsePercentiles) || got.Name != "GET" {
			t.Errorf("keep %v: %+v %v, want %+v %v", keep, got.Counts, got.ResponsePercentiles, want.Counts, want.ResponsePercentiles)
		}
		if got.Server == nil || got.Server.Commands["get"].Calls != 30 {
			t.Errorf("keep %v: server %+v, want 30 calls", keep, got.Server)
		}
		if (got.Repeats != nil) != keep || keep && got.Repeats.N != 3 {
			t.Errorf("keep %v: repeats %+v", keep, got.Repeats)
		}
	}
	if a.Counts.Completed != 1000 {
		t.Errorf("the first run was changed: %+v", a.Counts)
	}
	if got, _, err := (&Runs{}).Test("GET", report.TestOptions{}, verdict.SLO{}); got != nil || err != nil {
		t.Errorf("no runs: %v %v", got, err)
	}
}
