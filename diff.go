package pacer

import (
	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/report"
)

// Comparison is what `pacer diff` says of a candidate against a baseline:
// per test and figure, the change, its 95% interval and one word (worse,
// better, same, cannot tell), and the gate's outcome. Doc is the whole
// pacer.diff/v1 document (docs/diff.md).
type Comparison struct {
	Doc *diff.Document
	// Outcome is the gate's (Pass without a MaxRegression).
	Outcome Outcome
}

// DiffOptions are `pacer diff`'s settings; the zero value is its
// defaults (a 5% equivalence margin, no gate).
type DiffOptions struct {
	// Equivalence is the margin within which a change is "same" (0.05:
	// ±5%; default 0.05).
	Equivalence float64
	// ErrorEquivalence is the error rate's margin, in percentage points
	// of the scheduled requests (default 0.1).
	ErrorEquivalence float64
	// MaxRegression is the gate, as --max-regression takes it
	// ("p99:10%,throughput:5%"); empty: no gate.
	MaxRegression string
}

// Diff compares candidate results with baseline results test by test, as
// `pacer diff` does: several results a side are repeats of one another
// (their spread is the interval's), one a side is compared over its
// intervals.
func Diff(baseline, candidate []*Result, o DiffOptions) (*Comparison, error) {
	side := func(rs []*Result, label string) diff.Side {
		var s diff.Side
		for _, r := range rs {
			s.Inputs = append(s.Inputs, report.Input{Label: label, Doc: &report.Document{Tests: []report.Test{*r.Test}}, Format: report.FormatPacer})
		}
		return s
	}
	opts := diff.Options{Equivalence: o.Equivalence, ErrorEquivalence: o.ErrorEquivalence}
	if opts.Equivalence == 0 {
		opts.Equivalence = 0.05
	}
	if opts.ErrorEquivalence == 0 {
		opts.ErrorEquivalence = 0.1
	}
	if o.MaxRegression != "" {
		g, err := diff.ParseGate(o.MaxRegression)
		if err != nil {
			return nil, &ConfigError{Field: "MaxRegression", Err: err}
		}
		opts.Gate = g
	}
	d, err := diff.Compare(side(baseline, "baseline"), side(candidate, "candidate"), opts)
	if err != nil {
		return nil, err
	}
	return &Comparison{Doc: d, Outcome: diff.Outcome(d)}, nil
}
