package experiment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// seriesTest is a test of 200 requests at 2000/s.
func seriesTest(t experiment.Test) experiment.SeriesTest {
	rate := timeline.RatePerSecond(2000)
	return experiment.SeriesTest{Test: t, Timeline: timeline.Uniform{Rate: rate},
		Config: openloop.Config{Rate: rate, Requests: 200, HiccupInterval: -1}}
}

// TestRunSeries: each test is run Repeat times, every run shown as it
// ends, its runs pooled into one judged test; a test whose stream cannot
// be drawn stops the series with a usage error, keeping the tests before
// it.
func TestRunSeries(t *testing.T) {
	t.Parallel()
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	env := experiment.InProcessEnv(srv.Addr())
	bad := experiment.Test{ID: "bad", Title: "BAD", Stream: func(uint64) (scheduler.Commands, error) { return nil, errors.New("no such test") }}
	s := experiment.Series{Repeat: 2, Conns: 2, SLO: verdict.SLO{}, Options: report.TestOptions{Percentiles: true},
		Tests: []experiment.SeriesTest{seriesTest(experiment.Command("ping", "PING", "PING")), seriesTest(experiment.Command("get", "GET", "GET", "k")), seriesTest(bad)}}
	var runs, tests int
	var ids []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := env.RunSeries(ctx, s, experiment.SeriesOutput{
		Run: func(*scheduler.Result) error { runs++; return nil },
		Test: func(tt *report.Test, _ verdict.Judgement, interrupted bool) error {
			tests++
			ids = append(ids, tt.ID)
			if tt.Repeats == nil || len(tt.Repeats.Runs) != 2 || tt.Counts.Completed != 400 || interrupted {
				t.Errorf("%s: repeats %v, completed %d, interrupted %v; want 2 runs of 200", tt.ID, tt.Repeats, tt.Counts.Completed, interrupted)
			}
			return nil
		},
	})
	if err == nil || !usage.Is(err) {
		t.Fatalf("err %v: want the bad test's usage error", err)
	}
	if runs != 4 || tests != 2 || len(res.Tests) != 2 || ids[0] != "ping" || ids[1] != "get" || res.Interrupted || res.Err != nil {
		t.Fatalf("runs %d, tests %d (%v), result %d tests, interrupted %v, err %v", runs, tests, ids, len(res.Tests), res.Interrupted, res.Err)
	}
}
