package experiment

import (
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/verdict"
)

// Runs are the runs of one test (--repeat, bench -l) and what the server
// counted during them, pooled into the test a report and a document show.
// The zero Runs merges each run into the pool as it comes, so that a test
// that loops for hours holds one result; with Keep every run is kept too,
// for the summary of the repeats.
type Runs struct {
	// Keep keeps every run: Test then adds the median and min–max of
	// their figures (verdict.Repeats) when there are several.
	Keep bool

	list   []*scheduler.Result
	pooled *scheduler.Result
	server *serverinfo.Stats
	n      int
}

// Add adds a run and what the server counted during it (nil: not asked).
// Without Keep the run's figures are merged into a copy, so the run
// itself stays as it was.
func (r *Runs) Add(res *scheduler.Result, st *serverinfo.Stats) {
	r.n++
	r.server = mergeStats(r.server, st)
	switch {
	case r.Keep:
		r.list = append(r.list, res)
	case r.pooled == nil:
		r.pooled = res.Clone()
	default:
		r.pooled.Merge(res)
	}
}

// Len is the number of runs added.
func (r *Runs) Len() int { return r.n }

// List is the runs kept (nil without Keep).
func (r *Runs) List() []*scheduler.Result { return r.list }

// Server is what the server counted over all the runs (nil: not asked).
func (r *Runs) Server() *serverinfo.Stats { return r.server }

// Test is the runs pooled into one test named name: judged as one, with
// the server's counts over them all and, for several kept runs, the
// summary of each run (Repeats, judged with o and slo but without the server's
// counts, which are the pool's) when the runs are kept. o.Server is set
// by Test. With no run it returns nil.
func (r *Runs) Test(name string, o report.TestOptions, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	pooled := r.pooled
	if r.Keep {
		pooled = scheduler.Pool(r.list)
	}
	if pooled == nil {
		return nil, verdict.Judgement{}, nil
	}
	pooled.Name = name
	each := o
	o.Server = r.server
	if r.Keep && len(r.list) > 1 {
		for _, run := range r.list {
			o.Runs = append(o.Runs, run.Response)
		}
	}
	t, j, err := verdict.NewTest(pooled, o, slo)
	if err != nil {
		return nil, j, err
	}
	if r.Keep {
		if t.Repeats, err = verdict.Repeats(r.list, each, slo); err != nil {
			return nil, j, err
		}
	}
	return t, j, nil
}

// mergeStats adds a run's server counts to a test's: either may be nil,
// and into is returned, or from when into is nil.
func mergeStats(into, from *serverinfo.Stats) *serverinfo.Stats {
	if into == nil {
		return from
	}
	into.Merge(from)
	return into
}
