package verdict

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// StepDecision is what a sweep's step concludes against the SLO, one
// word each as the step table and the JSON (report.StepInfo.Decision,
// report.ClosedPoint.Decision) spell it. "" is a step without an SLO,
// judged by the trust rule alone.
type StepDecision string

// Decisions of a step.
const (
	// StepPass: the SLO met, every percentile's 95% interval within its
	// bound.
	StepPass StepDecision = "pass"
	// StepFail: the server missed a clause beyond doubt, or the target
	// was lost.
	StepFail StepDecision = "fail"
	// StepUnsustainable: the queue grew through the step (the trend
	// test), whatever its percentiles.
	StepUnsustainable StepDecision = "unsustainable"
	// StepAborted: the oldest request waited past --abort-after.
	StepAborted StepDecision = "aborted"
	// StepUncertain: a percentile's 95% interval holds its bound.
	StepUncertain StepDecision = "uncertain"
	// StepInconclusive: the trust rule could not tell the server's miss
	// from the client's (or the load was not delivered).
	StepInconclusive StepDecision = "inconclusive"
	// StepUnjudged: too few samples for a percentile clause that decides.
	StepUnjudged StepDecision = "unjudged"
	// StepSaturated: every clause missed was the host's capacity
	// (OwnerCapacity: the test had the host to itself and needed more of
	// it): a rate beyond what this setup sustains, though not a failure of
	// the server's own.
	StepSaturated StepDecision = "saturated"
)

// Outcome is what the decision adds to the trust rule's judgement of the
// step: Pass for a pass, Fail for the failures (fail, unsustainable,
// aborted), Inconclusive for the decisions that say neither (uncertain,
// inconclusive, unjudged). A step's outcome is the worse of this and its
// judgement's (see Step).
func (d StepDecision) Outcome() Outcome {
	switch d {
	case StepFail, StepUnsustainable, StepAborted, StepSaturated:
		return Fail
	case StepUncertain, StepInconclusive, StepUnjudged:
		return Inconclusive
	}
	return Pass
}

// StepFacts are what Step reads beside a step's test and its judgement:
// whether the step was aborted, the percentile clauses its samples are
// too few for, the intervals of the percentile clauses by clause index
// (PercentileIntervals) and the trend test (nil: none).
type StepFacts struct {
	Aborted   bool
	Short     []string
	Intervals map[int]report.StepInterval
	Trend     *report.StepTrend
}

// StepJudgement is how a sweep's step was judged against the SLO.
type StepJudgement struct {
	// Pass is set for a pass and for the failures (fail, unsustainable,
	// aborted); nil without an SLO and for the other decisions.
	Pass *bool
	// Outcome is the step's outcome, which a sweep's conclusion reads
	// (OpenSweep): the worse of the trust rule's judgement and the
	// decision's (StepDecision.Outcome), but Fail for an aborted step.
	Outcome  Outcome
	Decision StepDecision
	// Why says what made a decision other than a plain pass or fail;
	// Note is the same in a few words for the step table.
	Why, Note string
	// Intervals are the percentile clauses' 95% intervals; Shown the
	// index of the one that decided (-1: none).
	Intervals []report.StepInterval
	Shown     int
	Trend     *report.StepTrend
}

// Unjudged is a step not judged yet (or without its SLO): no decision,
// no interval shown.
func Unjudged() StepJudgement { return StepJudgement{Shown: -1} }

// Step decides a sweep's step from its test (its SLO verdict and the
// trust rule's judgement j, which attributes each failing clause to the
// server, the client or the host) and the facts beside it. The
// percentile clauses that bound a latency from above are decided by the
// 95% interval of the percentile, not by its point value:
//
//	bound ───────────────┼────────────────
//	pass      [───]      │                 the interval's upper end within
//	uncertain        [───┼───]             the bound inside the interval
//	fail                 │     [───]       its lower end beyond
//
// In order:
//   - aborted: a failure (the oldest request waited past --abort-after:
//     the server's); target lost: a failure (its outcome Error);
//   - too few samples for a percentile clause that decides: unjudged;
//   - Inconclusive with every failing clause the host's capacity
//     (OwnerCapacity: the test had the host to itself and needed more of
//     it): saturated, a failure: the rate is beyond what the setup
//     sustains, though the server's code did not miss it;
//   - Inconclusive (every failing clause the client's or the host's, or
//     a pass on an under-delivered load): inconclusive, neither the
//     server's failure nor a pass, and why ("the client host was too
//     busy to tell: …"); the search measures it again;
//   - a queue that grew through a step (trend.Rising): a failure,
//     unsustainable, whatever its percentiles;
//   - Fail: a failure when one clause the server missed is not a
//     percentile clause or its interval lies beyond the bound, else
//     uncertain;
//   - the SLO met: a pass when every interval lies within its bound,
//     else uncertain.
//
// A late generator does not pass a step on its service time: the
// attribution says whose a miss was, and a miss that was not the
// server's is inconclusive.
//
// The step's outcome composes: the worse of j's and the decision's, so
// a step never reads better than its judgement. Two refinements, said
// here: an aborted step is Fail whatever its judgement, since the abort
// is the server's own evidence (its oldest request waited past the
// bound) that no lateness of the generator's can explain; and a
// saturated one is Fail, since nothing but the test itself delayed it.
func Step(t *report.Test, j Judgement, f StepFacts) StepJudgement {
	v := StepJudgement{Outcome: j.Outcome, Shown: -1, Trend: f.Trend}
	s := t.SLO
	if s == nil {
		return v
	}
	yes, no := true, false
	for i := range s.Clauses {
		if iv, ok := f.Intervals[i]; ok {
			v.Intervals = append(v.Intervals, iv)
		}
	}
	// show picks the interval of the first clause whose interval decided
	// d (for a pass: the one nearest its bound), or else the first.
	show := func(d StepDecision) {
		best := -1.0
		for k, iv := range v.Intervals {
			switch {
			case d != StepPass && iv.Decision == string(d) && v.Shown < 0:
				v.Shown = k
			case d == StepPass && iv.Hi != nil && iv.Bound > 0 && *iv.Hi/iv.Bound > best:
				v.Shown, best = k, *iv.Hi/iv.Bound
			}
		}
		if v.Shown < 0 && len(v.Intervals) > 0 {
			v.Shown = 0
		}
	}
	switch {
	case f.Aborted:
		v.Pass, v.Decision = &no, StepAborted
		show(StepFail)
	case j.Outcome == Error:
		v.Pass, v.Decision = &no, StepFail
		v.Why = "the target was lost: " + safetext.Line(j.Reason)
	case unjudged(s, f.Short, false):
		v.Decision = StepUnjudged
		v.Why = "too few samples for " + strings.Join(f.Short, ", ")
		show(StepUncertain)
	case j.Outcome == Inconclusive && saturated(s, j):
		v.Pass, v.Decision = &no, StepSaturated
		v.Why, v.Note = "beyond what this setup sustains: "+safetext.Line(j.Reason), "the host full with the test"
		show(StepFail)
	case j.Outcome == Inconclusive:
		v.Decision = StepInconclusive
		// The trust rule's reason says whose the miss was ("… but the
		// client host was too busy to tell whose it is: …").
		v.Why = "inconclusive: " + safetext.Line(j.Reason)
		switch {
		case slices.Contains(j.Owners, OwnerHost):
			v.Note = "client host too busy"
		case j.Verdict == report.VerdictInconclusive:
			v.Note = "the client's miss"
		default:
			v.Why, v.Note = "not the server's verdict: "+safetext.Line(j.Reason), "load not delivered"
		}
		show(StepUncertain)
	case f.Trend != nil && f.Trend.Rising:
		v.Pass, v.Decision = &no, StepUnsustainable
		v.Why, v.Note = trendWhy(f.Trend), "unsustainable"
		show(StepFail)
	case j.Outcome == Fail:
		sure := false
		for i, c := range s.Clauses {
			if c.Pass || i < len(j.Owners) && j.Owners[i] != "" && j.Owners[i] != OwnerServer {
				continue
			}
			if iv, ok := f.Intervals[i]; !ok || iv.Decision == string(StepFail) {
				sure = true
			}
		}
		if sure {
			v.Pass, v.Decision = &no, StepFail
			show(StepFail)
			break
		}
		v.Decision = StepUncertain
		show(StepUncertain)
		v.Why = uncertainWhy(v.Intervals, v.Shown)
	default: // the SLO met
		v.Pass, v.Decision = &yes, StepPass
		for _, iv := range v.Intervals {
			if iv.Decision != string(StepPass) {
				v.Pass, v.Decision = nil, StepUncertain
			}
		}
		if v.Decision == StepPass {
			show(StepPass)
			break
		}
		show(StepUncertain)
		v.Why = uncertainWhy(v.Intervals, v.Shown)
	}
	if v.Decision == StepAborted || v.Decision == StepSaturated {
		v.Outcome = Fail
	} else {
		v.Outcome = Worse(j.Outcome, v.Decision.Outcome())
	}
	return v
}

// saturated reports whether every clause of s that failed is owned by
// the host's capacity (OwnerCapacity).
func saturated(s *report.SLOResult, j Judgement) bool {
	n := 0
	for i, c := range s.Clauses {
		if c.Pass {
			continue
		}
		if i >= len(j.Owners) || j.Owners[i] != OwnerCapacity {
			return false
		}
		n++
	}
	return n > 0
}

// Remeasured judges a step at a rate measured before (earlier) by its
// best measurement: it passes when it or any earlier one passed. Noise
// on a shared machine only adds latency, so one step that met the SLO
// shows the server can meet it at this rate; a failure must repeat (and
// a step that could not be judged takes an earlier pass). This is the
// one place a step's decision overrides its own judgement, and it says
// so: the pass it takes is an earlier step's, which the step table
// links (report.StepInfo.JudgedWith).
func Remeasured(now StepJudgement, earlier ...StepJudgement) StepJudgement {
	for _, e := range earlier {
		if e.Pass != nil && *e.Pass && !(now.Pass != nil && *now.Pass) {
			yes := true
			now.Pass, now.Outcome, now.Decision, now.Why, now.Note = &yes, Pass, StepPass, "", ""
		}
	}
	return now
}

// unjudged reports whether a step's verdict must give way to its short
// clauses: it passed (a pass the samples cannot support), or every clause
// it failed is short. An aborted step failed whatever its samples.
func unjudged(sr *report.SLOResult, short []string, aborted bool) bool {
	if sr == nil || len(short) == 0 || aborted {
		return false
	}
	for _, c := range sr.Clauses {
		if !c.Pass && !slices.Contains(short, c.Metric) {
			return false
		}
	}
	return true
}

// uncertainWhy words the interval k of ivs, which holds its bound.
func uncertainWhy(ivs []report.StepInterval, k int) string {
	if k < 0 || k >= len(ivs) {
		return "uncertain"
	}
	iv := ivs[k]
	where := ""
	if iv.WindowS != nil {
		where = fmt.Sprintf(" in the window at %s s", strconv.FormatFloat(*iv.WindowS, 'f', -1, 64))
	}
	return fmt.Sprintf("uncertain: the 95%% interval of %s [%s, %s] ms%s holds its %s ms bound (%s)",
		iv.Metric, IntervalEnd(iv.Lo), IntervalEnd(iv.Hi), where, report.FormatMs(iv.Bound), iv.Clause)
}

// IntervalEnd words an end of a percentile's interval in ms ("-": the
// sample has none on that side).
func IntervalEnd(v *float64) string {
	if v == nil {
		return "-"
	}
	return report.FormatMs(*v)
}

// trendWhy words a rising trend for the step table's notes.
func trendWhy(t *report.StepTrend) string {
	return fmt.Sprintf("unsustainable: the response p50 rose through the step (Mann–Kendall S = %d over %d intervals, p = %.2g) and so did the requests in flight (S = %d, p = %.2g), at α = %g",
		t.P50S, t.Intervals, t.P50P, t.InFlightS, t.InFlightP, t.Alpha)
}
