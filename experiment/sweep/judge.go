package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Decisions of a point (report.StepInfo.Decision).
const (
	decidePass          = "pass"
	decideFail          = "fail"
	decideUnsustainable = "unsustainable"
	decideAborted       = "aborted"
	decideUncertain     = "uncertain"
	decideInconclusive  = "inconclusive"
	decideUnjudged      = "unjudged"
)

// pointVerdict is how a point was judged against the SLO.
type pointVerdict struct {
	// pass is set for a pass and for the failures (fail, unsustainable,
	// aborted); nil without an SLO and for the other decisions. outcome
	// is the trust rule's judgement the sweep's outcome reads.
	pass     *bool
	outcome  verdict.Outcome
	decision string
	// why says what made a decision other than a plain pass or fail;
	// note is the same in a few words for the step table.
	why, note string
	// intervals are the percentile clauses' 95% intervals; shown the
	// index of the one that decided (-1: none).
	intervals []report.StepInterval
	shown     int
	trend     *report.StepTrend
}

// pointFacts are what judgePoint reads beside the test and its
// judgement: whether a step was aborted, the percentile clauses the
// samples are too few for (sampleRule.short), the intervals of the
// percentile clauses by clause index (percentileIntervals) and the trend
// test (pointTrend; nil: none).
type pointFacts struct {
	aborted   bool
	short     []string
	intervals map[int]report.StepInterval
	trend     *report.StepTrend
}

// judgePoint decides a sweep point from its test (its SLO verdict and
// the trust rule's judgement j, which attributes each failing clause to
// the server, the client or the host) and the facts beside it. The
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
//     the server's); target lost: a failure (Failed);
//   - too few samples for a percentile clause that decides: unjudged;
//   - Untrusted (every failing clause the client's or the host's, or a
//     pass on an under-delivered load): inconclusive, neither the
//     server's failure nor a pass, and why ("the client host was too
//     busy to tell: …"); the search measures it again;
//   - a queue that grew through a step (trend.Rising): a failure,
//     unsustainable, whatever its percentiles;
//   - Violated: a failure when one clause the server missed is not a
//     percentile clause or its interval lies beyond the bound, else
//     uncertain;
//   - the SLO met: a pass when every interval lies within its bound,
//     else uncertain.
//
// A late generator no longer passes a step on its service time: the
// attribution says whose a miss was, and a miss that was not the
// server's is inconclusive.
func judgePoint(t *report.Test, j verdict.Judgement, f pointFacts) pointVerdict {
	v := pointVerdict{outcome: j.Outcome, shown: -1, trend: f.trend}
	s := t.SLO
	if s == nil {
		return v
	}
	yes, no := true, false
	for i := range s.Clauses {
		if iv, ok := f.intervals[i]; ok {
			v.intervals = append(v.intervals, iv)
		}
	}
	// show picks the interval of the first clause whose interval decided
	// d (for a pass: the one nearest its bound), or else the first.
	show := func(d string) {
		best := -1.0
		for k, iv := range v.intervals {
			switch {
			case d != decidePass && iv.Decision == d && v.shown < 0:
				v.shown = k
			case d == decidePass && iv.Hi != nil && iv.Bound > 0 && *iv.Hi/iv.Bound > best:
				v.shown, best = k, *iv.Hi/iv.Bound
			}
		}
		if v.shown < 0 && len(v.intervals) > 0 {
			v.shown = 0
		}
	}
	switch {
	case f.aborted:
		v.pass, v.outcome, v.decision = &no, verdict.Fail, decideAborted
		show(decideFail)
	case j.Outcome == verdict.Error:
		v.pass, v.decision = &no, decideFail
		v.why = "the target was lost: " + oneLine(j.Reason)
	case unjudged(s, f.short, false):
		v.decision = decideUnjudged
		v.why = "too few samples for " + strings.Join(f.short, ", ")
		show(decideUncertain)
	case j.Outcome == verdict.Inconclusive:
		v.decision = decideInconclusive
		// The trust rule's reason says whose the miss was ("… but the
		// client host was too busy to tell whose it is: …").
		v.why = "inconclusive: " + oneLine(j.Reason)
		switch {
		case slices.Contains(j.Owners, verdict.OwnerHost):
			v.note = "client host too busy"
		case j.Verdict == report.VerdictInconclusive:
			v.note = "the client's miss"
		default:
			v.why, v.note = "not the server's verdict: "+oneLine(j.Reason), "load not delivered"
		}
		show(decideUncertain)
	case f.trend != nil && f.trend.Rising:
		v.pass, v.outcome, v.decision = &no, verdict.Fail, decideUnsustainable
		v.why, v.note = trendWhy(f.trend), "unsustainable"
		show(decideFail)
	case j.Outcome == verdict.Fail:
		sure := false
		for i, c := range s.Clauses {
			if c.Pass || i < len(j.Owners) && j.Owners[i] != "" && j.Owners[i] != verdict.OwnerServer {
				continue
			}
			if iv, ok := f.intervals[i]; !ok || iv.Decision == decideFail {
				sure = true
			}
		}
		if sure {
			v.pass, v.decision = &no, decideFail
			show(decideFail)
			break
		}
		v.decision = decideUncertain
		show(decideUncertain)
		v.why = uncertainWhy(v.intervals, v.shown)
	default: // the SLO met
		v.pass, v.decision = &yes, decidePass
		for _, iv := range v.intervals {
			if iv.Decision != decidePass {
				v.pass, v.decision = nil, decideUncertain
			}
		}
		if v.decision == decidePass {
			show(decidePass)
			break
		}
		show(decideUncertain)
		v.why = uncertainWhy(v.intervals, v.shown)
	}
	return v
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
		iv.Metric, ciEnd(iv.Lo), ciEnd(iv.Hi), where, report.FormatMs(iv.Bound), iv.Clause)
}

func ciEnd(v *float64) string {
	if v == nil {
		return "-"
	}
	return report.FormatMs(*v)
}

// percentileIntervals computes, for each clause of the SLO that bounds a
// latency percentile from above, the 95% interval of that percentile
// (histo.PercentileCI) of h, the point's pooled latencies (response
// time; a closed loop's latency from the send), by clause index. With
// windows (--slo-window) each window's interval is decided on its own: a
// clause fails when one window's interval lies beyond its bound (a
// window without samples fails, as SLO.Check fails it), passes when
// every window's lies within it, and is uncertain otherwise; the
// interval shown is that window's.
func percentileIntervals(sr *report.SLOResult, h *hdrhistogram.Histogram, windows []verdict.Window) map[int]report.StepInterval {
	if sr == nil {
		return nil
	}
	out := map[int]report.StepInterval{}
	for i, c := range sr.Clauses {
		p, ok := percentileOf(c.Metric)
		if !ok || c.Unit != "ms" || !strings.HasPrefix(c.Op, "<") {
			continue
		}
		if windows == nil {
			out[i] = clauseInterval(c, h, p)
			continue
		}
		var pick *report.StepInterval
		rank := func(iv report.StepInterval) int {
			return map[string]int{decidePass: 0, decideUncertain: 1, decideFail: 2}[iv.Decision]
		}
		for _, w := range windows {
			iv := clauseInterval(c, w.Latency, p)
			if w.Latency == nil || w.Latency.TotalCount() == 0 {
				iv.Decision = decideFail
			}
			start := w.Start.Seconds()
			iv.WindowS = &start
			nearer := pick != nil && rank(iv) == rank(*pick) && iv.Decision == decidePass && iv.Hi != nil && (pick.Hi == nil || *iv.Hi > *pick.Hi)
			if pick == nil || rank(iv) > rank(*pick) || nearer {
				pick = &iv
			}
		}
		if pick != nil {
			out[i] = *pick
		}
	}
	return out
}

// clauseInterval is the 95% interval of percentile p of h for clause c,
// decided against its bound.
func clauseInterval(c report.ClauseResult, h *hdrhistogram.Histogram, p float64) report.StepInterval {
	iv := report.StepInterval{Clause: c.Clause, Metric: c.Metric, Bound: c.Bound, Decision: decideUncertain}
	lo, hi, okLo, okHi := histo.PercentileCI(h, p)
	met := func(ms float64) bool {
		if c.Op == "<" {
			return ms < c.Bound
		}
		return ms <= c.Bound
	}
	if okLo {
		v := round6(histo.Millis(lo))
		iv.Lo = &v
	}
	if okHi {
		v := round6(histo.Millis(hi))
		iv.Hi = &v
	}
	switch {
	case iv.Hi != nil && met(*iv.Hi):
		iv.Decision = decidePass
	case iv.Lo != nil && !met(*iv.Lo):
		iv.Decision = decideFail
	}
	return iv
}

// judgeAgain judges p, a rate measured before (earlier), by its best
// measurement: it passes when p or any earlier one passed. Noise on a
// shared machine only adds latency, so one step that met the SLO shows
// the server can meet it at this rate; a failure must repeat (and a step
// that could not be judged takes an earlier pass).
func judgeAgain(p *openPoint, earlier []*openPoint, index map[*openPoint]int) {
	for _, q := range earlier {
		p.judgedWith = append(p.judgedWith, index[q])
		if q.pass != nil && *q.pass && !(p.pass != nil && *p.pass) {
			yes := true
			p.pass, p.outcome, p.decision, p.why, p.note = &yes, verdict.Pass, decidePass, "", ""
		}
	}
}

// openOutcome is an open sweep's judgement, by the trust rule, with a
// line for each point that makes it (a search's own, for a bracket it
// could not close, is rateSearch.trusted). A point whose target was lost fails
// it. Without an SLO each point is judged as run judges a test: one the
// generator's lateness makes untrustworthy makes the sweep Untrusted.
// With an SLO the conclusion rests on the bracket, the sustainable rate
// best (0: none) and the lowest failing rate above it: that failure must
// be the server's (some measurement at that rate Violated the SLO, or was
// aborted) for the result to stand; when every failure there is one the
// generator's lateness could explain, the sweep is Untrusted, as run is.
// No sustainable rate with a credible failure at the lowest rate is
// Violated.
func openOutcome(points []*openPoint, sloSet bool, best float64, interrupted bool) (verdict.Outcome, []string) {
	out := verdict.Pass
	var notes []string
	for _, p := range points {
		if p.outcome == verdict.Error && !p.aborted {
			notes = append(notes, fmt.Sprintf("pacer: %s: error: target lost: %s", safetext.Escape(p.test.Name), oneLine(p.test.VerdictReason)))
			out = verdict.Worse(out, verdict.Error)
		}
	}
	if interrupted {
		return out, notes
	}
	if !sloSet {
		for _, p := range points {
			if p.outcome == verdict.Inconclusive && !p.aborted {
				notes = append(notes, fmt.Sprintf("pacer: %s: inconclusive: %s", safetext.Escape(p.test.Name), oneLine(p.test.VerdictReason)))
				out = verdict.Worse(out, verdict.Inconclusive)
			}
		}
		return out, notes
	}
	upper := math.Inf(1)
	for _, p := range points {
		if p.pass != nil && !*p.pass && p.rate > best {
			upper = min(upper, p.rate)
		}
	}
	if math.IsInf(upper, 1) {
		if best > 0 {
			return out, notes
		}
		// Nothing passed, and nothing failed: the server's unless a step
		// said neither (uncertain, or the client's miss).
		for _, p := range points {
			if p.decision == decideUncertain || p.decision == decideInconclusive {
				notes = append(notes, fmt.Sprintf("pacer: %s: inconclusive: no step passed or failed the SLO beyond doubt: %s",
					safetext.Escape(p.test.Name), oneLine(p.why)))
				return verdict.Worse(out, verdict.Inconclusive), notes
			}
		}
		return verdict.Worse(out, verdict.Fail), notes // nothing measured to a verdict
	}
	credible := false
	var doubt *openPoint
	for _, p := range points {
		if p.rate != upper || p.pass == nil || *p.pass {
			continue
		}
		switch p.outcome {
		case verdict.Fail, verdict.Error:
			credible = true
		case verdict.Inconclusive:
			doubt = p
		}
	}
	switch {
	case !credible && doubt != nil:
		notes = append(notes, fmt.Sprintf("pacer: %s: inconclusive: the sweep's failure at %s/s could be the generator's: %s",
			safetext.Escape(doubt.test.Name), formatRate(upper), oneLine(doubt.test.VerdictReason)))
		return verdict.Worse(out, verdict.Inconclusive), notes
	case best == 0:
		return verdict.Worse(out, verdict.Fail), notes
	}
	return out, notes
}

// oneLine folds a reason onto one line, escaped for a terminal.
func oneLine(s string) string { return safetext.Line(s) }
