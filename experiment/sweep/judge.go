package sweep

import (
	"fmt"
	"math"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// judgePoint reads a sweep point's test (its SLO verdict and the trust
// rule's judgement j) for the sweep: pass is nil without an SLO; outcome
// is the judgement the sweep's outcome reads.
//
// A point passes when the SLO holds and the load was delivered (Trusted),
// no step of it was aborted and its target stayed, or when the SLO failed
// on response time but holds on service time (onService): the failure is
// then the generator's lateness (the step's verdict says
// generator_behind), and a late generator only makes the load burstier,
// which can only lengthen service times, so the server meets the SLO at
// this rate. Without this a search on a busy machine measures the
// machine's scheduling noise, not the server. An under-delivered load
// neither passes nor shows a server's failure: Untrusted.
func judgePoint(t *report.Test, j report.Judgement, aborted bool) (pass *bool, onService bool, outcome report.Outcome) {
	outcome = j.Outcome
	s := t.SLO
	if s == nil {
		return nil, false, outcome
	}
	ok := false
	switch {
	case aborted:
		// The oldest request waited past the abort bound: the server's.
		outcome = report.Violated
	case j.Outcome == report.Trusted:
		ok = s.Pass
	case j.Outcome == report.Untrusted && s.MetOnService() && t.Mode == "open":
		if !report.Assess(t).UnderDelivered {
			ok, onService, outcome = true, true, report.Trusted
		}
	}
	return &ok, onService, outcome
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
			p.pass, p.onService, p.outcome = &yes, q.onService, report.Trusted
		}
	}
}

// openOutcome is an open sweep's judgement, by the trust rule, with a
// line for each point that makes it. A point whose target was lost fails
// it. Without an SLO each point is judged as run judges a test: one the
// generator's lateness makes untrustworthy makes the sweep Untrusted.
// With an SLO the conclusion rests on the bracket, the sustainable rate
// best (0: none) and the lowest failing rate above it: that failure must
// be the server's (some measurement at that rate Violated the SLO, or was
// aborted) for the result to stand; when every failure there is one the
// generator's lateness could explain, the sweep is Untrusted, as run is.
// No sustainable rate with a credible failure at the lowest rate is
// Violated.
func openOutcome(points []*openPoint, sloSet bool, best float64, interrupted bool) (report.Outcome, []string) {
	out := report.Trusted
	var notes []string
	for _, p := range points {
		if p.outcome == report.Failed && !p.aborted {
			notes = append(notes, fmt.Sprintf("pacer: %s: target lost: %s", safetext.Escape(p.test.Name), oneLine(p.test.VerdictReason)))
			out = report.Worse(out, report.Failed)
		}
	}
	if interrupted {
		return out, notes
	}
	if !sloSet {
		for _, p := range points {
			if p.outcome == report.Untrusted && !p.aborted {
				notes = append(notes, fmt.Sprintf("pacer: %s: not trustworthy: %s", safetext.Escape(p.test.Name), oneLine(p.test.VerdictReason)))
				out = report.Worse(out, report.Untrusted)
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
		if best == 0 {
			return report.Worse(out, report.Violated), notes // nothing measured to a verdict
		}
		return out, notes
	}
	credible := false
	var doubt *openPoint
	for _, p := range points {
		if p.rate != upper || p.pass == nil || *p.pass {
			continue
		}
		switch p.outcome {
		case report.Violated, report.Failed:
			credible = true
		case report.Untrusted:
			doubt = p
		}
	}
	switch {
	case !credible && doubt != nil:
		notes = append(notes, fmt.Sprintf("pacer: %s: not trustworthy: the sweep's failure at %s/s could be the generator's: %s",
			safetext.Escape(doubt.test.Name), formatRate(upper), oneLine(doubt.test.VerdictReason)))
		return report.Worse(out, report.Untrusted), notes
	case best == 0:
		return report.Worse(out, report.Violated), notes
	}
	return out, notes
}

// basis is the times a point's SLO verdict rests on: "response",
// "service" (see judgePoint), or "" without an SLO.
func basis(slo, onService bool) string {
	switch {
	case !slo:
		return ""
	case onService:
		return "service"
	}
	return "response"
}

// oneLine folds a reason onto one line.
func oneLine(s string) string { return safetext.OneLine(s) }
