package experiment

import (
	"context"
	"fmt"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Series is pacer run's experiment: tests one after another on the open
// model, each run Repeat times on its own timeline, its runs pooled into
// one test and judged against SLO.
type Series struct {
	Tests []SeriesTest
	// Repeat is the runs per test (at least 1).
	Repeat int
	Conns  int
	// Options are each test's (its ID is set per test); SLO judges it.
	Options report.TestOptions
	SLO     verdict.SLO
	// Decide, when not nil, gives each run a budget to decide in
	// (--decide-within), for the test of that ID.
	Decide func(id string) *Decide
	// Visibility is probes per second measuring the replicas' visibility
	// lag (0: none).
	Visibility float64
}

// SeriesTest is one test of a Series: its workload, the timeline and
// driver settings of each of its runs, the keys that route it in a
// cluster, and the seed of its command stream (one stream, continued
// from run to run).
type SeriesTest struct {
	Test     Test
	Timeline timeline.Timeline
	Config   openloop.Config
	Keys     endpoint.Keys
	Seed     uint64
}

// SeriesOutput is what a Series shows as it goes; either may be nil.
type SeriesOutput struct {
	// Run sees each run of a repeated test as it ends (its own line).
	Run func(*scheduler.Result) error
	// Test sees each test, its runs pooled and judged, as it ends, and
	// whether the series was interrupted so far.
	Test func(t *report.Test, j verdict.Judgement, interrupted bool) error
}

// SeriesResult is how a Series ended: the tests measured (in order),
// whether it was interrupted, and the error a run ended with (the tests
// before it are kept).
type SeriesResult struct {
	Tests       []report.Test
	Interrupted bool
	Err         error
}

// RunSeries runs s, stopping after the test in which a run failed or the
// series was interrupted. Its error is what kept it from measuring (a
// test whose stream cannot be drawn: a usage error; an output's error).
func (e *Env) RunSeries(ctx context.Context, s Series, out SeriesOutput) (*SeriesResult, error) {
	r := &SeriesResult{}
	for _, st := range s.Tests {
		test := st.Test
		stream, err := test.Stream(e.Place.StreamSeed(st.Seed))
		if err != nil {
			return r, usage.Errorf("%v", err)
		}
		runs, err := Repeat(ctx, s.Repeat, func(k int) (*scheduler.Result, *serverinfo.Stats, error) {
			var decide *Decide
			if s.Decide != nil {
				decide = s.Decide(test.ID)
			}
			return e.RunOpen(ctx, Open{Test: test, Name: RunName(test.Title, k, s.Repeat), Timeline: st.Timeline, Conns: s.Conns,
				Keys: st.Keys, Stream: stream, Config: st.Config, Decide: decide, Visibility: s.Visibility})
		}, func(res *scheduler.Result) error {
			if s.Repeat == 1 || out.Run == nil {
				return nil
			}
			return out.Run(res)
		})
		if err != nil {
			return r, err
		}
		r.Err, r.Interrupted = runs.Err, r.Interrupted || runs.Interrupted
		if runs.Len() > 0 {
			// The test pools its runs and the server's counts (a
			// cluster's: its primaries' sum).
			o := s.Options
			o.ID = test.ID
			t, j, err := runs.Test(test.Title, o, s.SLO)
			if err != nil {
				return r, err
			}
			r.Tests = append(r.Tests, *t)
			r.Interrupted = r.Interrupted || t.Interrupted || ctx.Err() != nil
			if out.Test != nil {
				if err := out.Test(t, j, r.Interrupted); err != nil {
					return r, err
				}
			}
		}
		if r.Err != nil || r.Interrupted || ctx.Err() != nil {
			r.Interrupted = r.Interrupted || ctx.Err() != nil
			break
		}
	}
	return r, nil
}

// RunName is the name of run k of a test repeated n times: "GET (run
// 2/3)", or the title alone for one run.
func RunName(title string, k, n int) string {
	if n <= 1 {
		return title
	}
	return fmt.Sprintf("%s (run %d/%d)", title, k+1, n)
}
