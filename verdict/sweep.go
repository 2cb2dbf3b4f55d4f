package verdict

import (
	"fmt"
	"math"
	"time"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// A sweep's conclusion composes the judgements of its steps (Step): the
// sweep package measures and gathers the facts, these rules conclude.

// SweepStep is a step of an open sweep as its conclusion reads it: its
// test, its rate, whether it was aborted and its judgement.
type SweepStep struct {
	Test    *report.Test
	Rate    float64
	Aborted bool
	StepJudgement
}

// OpenSweep is an open sweep's outcome, by the trust rule, with a line
// for each step that makes it (a search's own, for a bracket it could
// not close, is the sweep package's to add with Worse). A step whose
// target was lost makes it Error. Without an SLO each step is judged as
// run judges a test: one the generator's lateness makes inconclusive
// makes the sweep Inconclusive. With an SLO the conclusion rests on the
// bracket, the sustainable rate best (0: none) and the lowest failing
// rate above it: that failure must be the server's (some measurement at
// that rate failed the SLO, or was aborted) for the result to stand;
// when every failure there is one the generator's lateness could
// explain, the sweep is Inconclusive, as run is. No sustainable rate
// with a credible failure at the lowest rate is Fail.
func OpenSweep(steps []SweepStep, sloSet bool, best float64, interrupted bool) (Outcome, []string) {
	out := Pass
	var notes []string
	for _, p := range steps {
		if p.Outcome == Error && !p.Aborted {
			notes = append(notes, fmt.Sprintf("pacer: %s: error: target lost: %s", safetext.Escape(p.Test.Name), safetext.Line(p.Test.VerdictReason)))
			out = Worse(out, Error)
		}
	}
	if interrupted {
		return out, notes
	}
	if !sloSet {
		for _, p := range steps {
			if p.Outcome == Inconclusive && !p.Aborted {
				notes = append(notes, fmt.Sprintf("pacer: %s: inconclusive: %s", safetext.Escape(p.Test.Name), safetext.Line(p.Test.VerdictReason)))
				out = Worse(out, Inconclusive)
			}
		}
		return out, notes
	}
	upper := math.Inf(1)
	for _, p := range steps {
		if p.Pass != nil && !*p.Pass && p.Rate > best {
			upper = min(upper, p.Rate)
		}
	}
	if math.IsInf(upper, 1) {
		if best > 0 {
			return out, notes
		}
		// Nothing passed, and nothing failed: the server's unless a step
		// said neither (uncertain, or the client's miss).
		for _, p := range steps {
			if p.Decision == StepUncertain || p.Decision == StepInconclusive {
				notes = append(notes, fmt.Sprintf("pacer: %s: inconclusive: no step passed or failed the SLO beyond doubt: %s",
					safetext.Escape(p.Test.Name), safetext.Line(p.Why)))
				return Worse(out, Inconclusive), notes
			}
		}
		return Worse(out, Fail), notes // nothing measured to a verdict
	}
	credible := false
	var doubt *SweepStep
	for i := range steps {
		p := &steps[i]
		if p.Rate != upper || p.Pass == nil || *p.Pass {
			continue
		}
		switch p.Outcome {
		case Fail, Error:
			credible = true
		case Inconclusive:
			doubt = p
		}
	}
	switch {
	case !credible && doubt != nil:
		notes = append(notes, fmt.Sprintf("pacer: %s: inconclusive: the sweep's failure at %s/s could be the generator's: %s",
			safetext.Escape(doubt.Test.Name), rateText(upper), safetext.Line(doubt.Test.VerdictReason)))
		return Worse(out, Inconclusive), notes
	case best == 0:
		return Worse(out, Fail), notes
	}
	return out, notes
}

// ClosedSweep is a closed sweep's outcome from its points' runs and
// their judgements (Step), with a line for each that makes it: Error
// when a run lost its target (judged by the trust rule without the SLO);
// with an SLO and no point that passed, Fail when a point failed (or
// none was measured), Inconclusive when each was uncertain or
// inconclusive. An interrupted sweep is judged on its lost targets only.
func ClosedSweep(runs []*scheduler.Result, points []StepJudgement, sloSet, interrupted bool) (Outcome, []string) {
	out := Pass
	var notes []string
	for _, r := range runs {
		rt, jd, err := NewTest(r, report.TestOptions{}, SLO{})
		if err == nil && jd.Outcome == Error {
			out = Worse(out, Error)
			notes = append(notes, fmt.Sprintf("pacer: %s: error: target lost: %s", safetext.Escape(rt.Name), safetext.Line(jd.Reason)))
		}
	}
	anyPass, failed := false, false
	for _, p := range points {
		anyPass = anyPass || p.Pass != nil && *p.Pass
		failed = failed || p.Pass != nil && !*p.Pass
	}
	if !sloSet || anyPass || interrupted {
		return out, notes
	}
	// No point passed: the server's, unless no point failed either (each
	// uncertain or inconclusive).
	if failed || len(points) == 0 {
		return Worse(out, Fail), notes
	}
	notes = append(notes, "pacer: no point passed or failed the SLO beyond doubt: each was uncertain or inconclusive")
	return Worse(out, Inconclusive), notes
}

// AbortedAtOnce reports whether an aborted step (its facts st) was cut within its first
// interval (or before any was measured) on a host that did not stall
// meanwhile: its oldest request had waited past --abort-after (bound) by
// the first interval's end, while the host's longest hiccup stayed under
// half of it. A host that froze pacer for as long can have made the
// abort itself: that step is a failure to measure again like any other.
func AbortedAtOnce(st *scheduler.Result, bound time.Duration) bool {
	iv := st.Interval
	if iv <= 0 {
		iv = scheduler.DefaultInterval
	}
	if st.Hiccups != nil && st.Hiccups.TotalCount() > 0 && time.Duration(st.Hiccups.Max()) >= bound/2 {
		return false
	}
	return st.Window <= iv || len(st.Intervals) <= 1
}

// rateText words a rate as the step table does: 1000, 1234.500.
func rateText(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3f", r)
}
