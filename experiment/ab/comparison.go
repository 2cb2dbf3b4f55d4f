package ab

import (
	"context"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
)

// Comparison is a whole session as pacer ab runs it: the rounds
// (Measure, looked at with o's gate when cfg has a budget), both sides'
// documents, and diff's comparison of them.
type Comparison struct {
	Config Config
	Sides  [2]Side
	// NewDoc heads side s's document (its header and config); it is
	// called again for the looks and at the end, after Interrupted is
	// known.
	NewDoc func(s int, interrupted bool) *report.Document
	// Labels and Targets name the sides in the comparison (Compare).
	Labels, Targets [2]string
	Options         diff.Options
	// Each, when not nil, sees every run as it ends.
	Each func(Run)
}

// Ended is how a session ended: the rounds' result, both documents, the
// comparison, and the one reason that decides its exit (End).
type Ended struct {
	Result *Result
	Docs   [2]*report.Document
	Diff   *diff.Document
	// Interrupted: ctx ended or a run was interrupted (the rounds so far
	// are in the documents and compared).
	Interrupted bool
	// Lost is the first test whose target was lost (nil: none);
	// DocErr what made the documents fail; DiffErr what made the
	// comparison fail (no comparison then).
	Lost            *Lost
	DocErr, DiffErr error
}

// End says which outcome decides the session, in this order: documents
// that could not be made (nothing to write or compare), interrupted
// (with the rounds' error, if any), a usage error of the rounds, a run
// that failed, a lost target, a comparison that failed; none of them
// (Decided): the comparison's gate decides.
type End int

const (
	Decided End = iota
	Interrupted
	UsageError
	Failed
	TargetLost
	CompareFailed
)

// End is the outcome that decides the session's exit, and its error.
func (e *Ended) End() (End, error) {
	err := e.Result.Err
	switch {
	case e.DocErr != nil:
		return Failed, e.DocErr
	case e.Interrupted:
		return Interrupted, err
	case err != nil && usage.Is(err):
		return UsageError, err
	case err != nil:
		return Failed, err
	case e.Lost != nil:
		return TargetLost, e.Lost
	case e.DiffErr != nil:
		return CompareFailed, e.DiffErr
	}
	return Decided, nil
}

// Run runs the session: its rounds, then both documents and their
// comparison, with how each test used the budget.
func (s *Comparison) Run(ctx context.Context) *Ended {
	newDoc := func(interrupted bool) func(int) *report.Document {
		return func(side int) *report.Document { return s.NewDoc(side, interrupted) }
	}
	tests := s.Config.Tests
	look := func(r *Result, l Look) bool {
		return r.LookAt(l, tests, newDoc(false), s.Labels, s.Targets, s.Options)
	}
	res := Measure(ctx, s.Sides, s.Config, s.Each, look)
	e := &Ended{Result: res, Interrupted: res.Interrupted || ctx.Err() != nil}
	e.Docs, e.Lost, e.DocErr = res.Documents(tests, newDoc(e.Interrupted))
	if e.DocErr != nil {
		return e
	}
	o := s.Options
	o.Decide = res.Decides(tests)
	e.Diff, e.DiffErr = Compare(e.Docs, s.Labels, s.Targets, o)
	return e
}
