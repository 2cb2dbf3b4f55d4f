package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// Outcome is what a judged test means: the CLI maps it to an exit code.
type Outcome int

const (
	// Trusted: the result stands (exit 0).
	Trusted Outcome = iota
	// Violated: the SLO failed and the generator cannot explain it (exit 3).
	Violated
	// Untrusted: the generator's lateness or an under-delivered load could
	// change the conclusion (verdict generator_behind, exit 4).
	Untrusted
	// Failed: the target was lost or nothing completed (verdict
	// target_lost, exit 1).
	Failed
)

// Judgement is the trust rule's decision on one test: its outcome, the
// verdict the result reports and one sentence saying why.
type Judgement struct {
	Outcome Outcome
	Verdict string
	Reason  string
}

// Judge applies the trust rule to a test and its SLO verdict (t.SLO, nil
// without --slo). It is pure: no clock, no I/O. Response time = send
// lag + service time, both from the intended time, so the generator's
// lateness can only make latencies look worse:
//
//   - target lost (every connection gone for good, or nothing completed
//     of what was scheduled, unless interrupted first): Failed. A test
//     read back keeps the target_lost it was given.
//   - no SLO: Untrusted (generator_behind) when the lag is material — send
//     lag p99 above the limit and at least 10% of the response p99 — or
//     less than 99.5% of the requests the generator answered for were sent;
//     Trusted otherwise (with a note when the lag was high but immaterial).
//   - SLO passed: Trusted, noting a high lag, unless the load was
//     under-delivered (sent share below 99.5%, or the delivered rate short
//     of the target by more than 0.5%, whoever caused it): Untrusted.
//   - SLO failed: Violated when the generator kept its timeline, or when
//     one failing clause fails regardless of it (a latency that also fails
//     on service time, or whose window's lag p99 is under 10% of it; errors
//     and timeouts; shares and rates the generator's own unsent requests
//     cannot account for); Untrusted only when its lateness could explain
//     every failing clause.
//
// Requests the target held back (see scheduler.Assess) count as the
// server's doing throughout, except for under-delivery: a pass at less
// than the target load is no pass.
func Judge(t *Test) Judgement {
	if t == nil {
		return Judgement{Outcome: Trusted, Verdict: VerdictOK}
	}
	slo := t.SLO
	if lost, why := targetLost(t); lost {
		return Judgement{Failed, VerdictTargetLost, why}
	}
	h := Assess(t)
	verdict, why := h.verdict()
	switch {
	case slo == nil && verdict == VerdictGeneratorBehind:
		return Judgement{Untrusted, verdict, why}
	case slo == nil:
		return Judgement{Trusted, verdict, why}
	case slo.Pass && h.UnderDelivered:
		return Judgement{Untrusted, VerdictGeneratorBehind, "the SLO passed, but on an under-delivered load: " + shortfall(h) + h.HeldBackNote()}
	case slo.Pass && h.LagHigh:
		return Judgement{Trusted, VerdictOK, fmt.Sprintf("the SLO passed on response time, which includes the send lag: a send lag p99 of %.3f ms (above %.3f ms) can only have made it look worse",
			dms(h.LagP99), dms(h.LagLimit))}
	case slo.Pass:
		return Judgement{Trusted, VerdictOK, why}
	case !h.Paced:
		return Judgement{Violated, VerdictOK, why + ", so the violation is the server's"}
	case !h.LagHigh && h.GeneratorSentShare >= MinSentFraction:
		return Judgement{Violated, VerdictOK, why + "; the generator kept its timeline, so the violation is the server's"}
	}
	behind := fmt.Sprintf("the generator fell behind (send lag p99 %.3f ms, %.2f%% sent)", dms(h.LagP99), h.GeneratorSentShare*100)
	var material []string
	for _, c := range slo.Clauses {
		if c.Pass {
			continue
		}
		because, immaterial := regardless(c, h, t.Counts)
		if immaterial {
			return Judgement{Violated, VerdictOK, behind + ", but " + c.Clause + " fails regardless: " + because}
		}
		material = append(material, c.Clause+" "+because)
	}
	if len(material) == 0 { // a failed SLO without a failing clause: nothing to blame the generator for
		return Judgement{Violated, VerdictOK, behind + ", but no failing clause depends on it"}
	}
	why = behind + " and its lateness could explain the violation: " + material[0]
	if len(material) > 1 {
		why += fmt.Sprintf(" (and %d more clauses)", len(material)-1)
	}
	return Judgement{Untrusted, VerdictGeneratorBehind, why + h.HeldBackNote()}
}

// targetLost decides whether a test lost its target: nothing completed of
// what was scheduled, or every connection gone at the end of the
// timeline. The reason is one sentence naming the first error. A test
// read back whose verdict says so keeps it (a merge of shards judges its
// parts first).
func targetLost(t *Test) (bool, string) {
	c := t.Counts
	f := t.mustFigures()
	if f.read && t.Verdict == VerdictTargetLost {
		return true, t.VerdictReason
	}
	cause := ""
	switch {
	case t.FirstError != "":
		cause = "; the first error was: " + t.FirstError
	case c.Timeouts > 0:
		cause = fmt.Sprintf("; %d requests timed out without a reply", c.Timeouts)
	}
	switch {
	case c.Scheduled > 0 && c.Completed == 0:
		return true, fmt.Sprintf("none of %d scheduled requests completed%s", c.Scheduled, cause)
	case f.targetGone:
		return true, "every connection was lost and none came back by the end of the timeline" + cause
	}
	return false, ""
}

// regardless decides whether failing clause c fails whatever the
// generator did, and says why (or, when not, how lateness could explain
// it).
func regardless(cr ClauseResult, h Health, total scheduler.Counts) (string, bool) {
	c := cr.c
	switch {
	case c.latency() && cr.Observed == nil:
		return "nothing was answered", true
	case c.latency() && !c.upper():
		return "lateness only makes latencies higher", true
	case c.latency() && cr.serviceFails:
		return "it fails on service time too", true
	case c.latency() && cr.lagP99 < MaterialLag**cr.Observed:
		return fmt.Sprintf("the send lag p99 (%.3f ms) is under %.0f%% of %s", cr.lagP99, MaterialLag*100, formatValue(*cr.Observed, cr.Unit)), true
	case c.latency():
		return fmt.Sprintf("(%s) meets its bound on service time and the send lag p99 (%.3f ms) is %.0f%% of it",
			formatValue(*cr.Observed, cr.Unit), cr.lagP99, 100*cr.lagP99/math.Max(*cr.Observed, 1e-9)), false
	case c.metric == "errors" || c.metric == "timeouts":
		return "errors and timeouts are the server's answers, not the generator's lateness", true
	}
	// Shares and rates: had the generator sent its own unsent requests
	// (and had they completed), would the clause pass?
	gen := h.GeneratorUnsent(total)
	v := *cr.Observed
	switch {
	case c.metric == "unsent" && c.upper() && cr.scheduled > 0:
		v = math.Max(0, v-100*float64(gen)/float64(cr.scheduled))
	case (c.metric == "rate" || c.metric == "achieved") && !c.upper() && cr.dur > 0:
		v += float64(gen) / cr.dur.Seconds()
	default:
		return "lateness cannot account for it", true
	}
	if !c.met(v) {
		return fmt.Sprintf("the generator's own %d unsent requests cannot account for it", gen), true
	}
	return fmt.Sprintf("(%s) could be the generator's %d unsent requests", formatValue(*cr.Observed, cr.Unit), gen), false
}

// shortfall says how the load fell short: the sent share or the
// delivered rate.
func shortfall(h Health) string {
	if h.SentShare < MinSentFraction {
		return fmt.Sprintf("only %.2f%% of scheduled requests were sent (below %.1f%%)", h.SentShare*100, MinSentFraction*100)
	}
	return fmt.Sprintf("requests were sent at %s req/s, %.1f%% short of the target %s req/s (more than %.1f%%)",
		strconv.FormatFloat(h.Delivered, 'f', 1, 64), 100*(1-h.Delivered/h.Target), strconv.FormatFloat(h.Target, 'f', -1, 64), MaxRateShortfall*100)
}

func dms(d time.Duration) float64 { return histo.Millis(int64(d)) }

// Worse returns the outcome that matters more when several apply: Failed,
// then Untrusted, then Violated, then Trusted.
func Worse(a, b Outcome) Outcome { return max(a, b) }
