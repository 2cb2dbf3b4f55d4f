package experiment

import (
	"context"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// Repeated is a test's runs (Repeat), pooled, and how the loop ended.
type Repeated struct {
	Runs
	// Interrupted is set when a run was interrupted, ctx ended, or a run
	// was interrupted while it waited for its planned start.
	Interrupted bool
	// Err is the error a run ended with; the runs before it, and its own
	// result when it has one, are kept.
	Err error
}

// Repeat runs a test n times (--repeat) with run, which is given the
// run's index, and pools the runs (each kept for the repeats' summary
// when n > 1). It stops at a run's error or at an interruption. each,
// when not nil, sees every run's result as it ends (a run's own line); an
// error from it ends Repeat with that error.
func Repeat(ctx context.Context, n int, run func(k int) (*scheduler.Result, *serverinfo.Stats, error), each func(*scheduler.Result) error) (*Repeated, error) {
	r := &Repeated{Runs: Runs{Keep: n > 1}}
	for k := 0; k < n; k++ {
		res, st, err := run(k)
		if res == nil && err == nil { // interrupted waiting for its start
			r.Interrupted = true
			break
		}
		if res != nil {
			r.Add(res, st)
			if each != nil {
				if eerr := each(res); eerr != nil {
					return nil, eerr
				}
			}
		}
		if err != nil {
			r.Err = err
			break
		}
		if res.Interrupted || ctx.Err() != nil {
			r.Interrupted = true
			break
		}
	}
	return r, nil
}
