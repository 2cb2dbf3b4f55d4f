package sweep

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pacer-load/pacer/report"
)

// What a search may claim.
//
// Results contradict each other when a rate fails below one that passed:
// noise that failed the lower step, or a server whose latency does not
// fall with the rate (idle connections wake slowly). A search measures
// such a failure again before it claims to have converged (the highest
// first, and no more once one persists), and a contradiction left over
// keeps it from claiming so. A search that stopped without converging
// (its step limit, rates it could not judge) is not an answer to exit 0
// on unless its bracket is within the precision anyway.

// contradiction is the failure below lo to measure again before the
// search ends: the highest rate below lo that failed once and never
// passed, unless one failed twice already (that contradiction persists,
// and the others would not change the conclusion), or it was the latest
// step. 0: none.
func (s *rateSearch) contradiction() float64 {
	if len(s.contradictions(true)) > 0 {
		return 0
	}
	c := 0.0
	for r, n := range s.failed {
		if n == 1 && !s.passed[r] && r < s.lo && r != s.last && s.judgeable(r) && r > c {
			c = r
		}
	}
	return c
}

// contradictions lists the rates that failed below one that passed, each
// with the lowest such passing rate; persisting only: those that failed
// twice or more.
func (s *rateSearch) contradictions(persisting bool) []report.Contradiction {
	return contradictionsOf(s.passedAt, s.failedAt, persisting)
}

// contradicted is "" or a clause on the contradictions left, the highest
// first: "; but 250/s failed 2 times below 1000/s, which passed:
// contradicting results". Those that failed once could not be measured
// again (the steps, or the floor, did not allow it).
func (s *rateSearch) contradicted() string {
	cs := s.contradictions(false)
	if len(cs) == 0 {
		return ""
	}
	c := cs[len(cs)-1]
	for _, d := range cs {
		if d.Persisting {
			c = d // a persisting one says more
		}
	}
	more := ""
	if len(cs) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(cs)-1)
	}
	times := "once"
	switch n := len(c.FailedSteps); {
	case n == 2:
		times = "twice"
	case n > 2:
		times = fmt.Sprintf("%d times", n)
	}
	return fmt.Sprintf("; but %s/s failed %s below %s/s, which passed: contradicting results%s",
		formatRate(c.LowerRate), times, formatRate(c.HigherRate), more)
}

// contradictionsOf lists each rate that failed (at the steps failedAt
// holds) and never passed below a rate that passed (passedAt), paired with
// the lowest passing rate above it, in increasing order; persisting
// only: those that failed at least twice.
func contradictionsOf(passedAt, failedAt map[float64][]int, persisting bool) []report.Contradiction {
	var out []report.Contradiction
	for r, at := range failedAt {
		if len(at) == 0 || len(passedAt[r]) > 0 || persisting && len(at) < 2 {
			continue
		}
		higher := 0.0
		for q, pat := range passedAt {
			if len(pat) > 0 && q > r && (higher == 0 || q < higher) {
				higher = q
			}
		}
		if higher == 0 {
			continue
		}
		out = append(out, report.Contradiction{LowerRate: r, FailedSteps: slices.Clone(at), HigherRate: higher,
			PassedSteps: slices.Clone(passedAt[higher]), Persisting: len(at) >= 2})
	}
	slices.SortFunc(out, func(a, b report.Contradiction) int { return cmp.Compare(a.LowerRate, b.LowerRate) })
	return out
}

// trusted reports whether a finished search's answer stands (exit 0 as
// far as the search goes), and when not, why in a sentence: a search
// that did not converge, unless its bracket is within the precision
// anyway or every rate up to --to passed; and none with contradictions
// left (resolved ones passed when measured again). A search with no passing rate is left to the points'
// outcome (see verdict.OpenSweep).
func (s *rateSearch) trusted() (bool, string) {
	if s.lo == 0 || s.converged || s.toReached {
		return true, ""
	}
	persist := len(s.contradictions(false)) > 0
	if !persist && s.hi > 0 && s.hi <= s.lo*(1+s.precision) {
		return true, ""
	}
	why := s.reason
	if s.limited {
		why = fmt.Sprintf("stopped at its step limit, --max-steps %d", s.maxSteps)
	}
	span := fmt.Sprintf("%s/s surely passes and no rate above it surely failed", formatRate(s.lo))
	if s.hi > 0 {
		span = fmt.Sprintf("the sustainable rate lies between %s/s and %s/s", formatRate(s.lo), formatRate(s.hi))
		if s.hi > s.lo*(1+s.precision) {
			span += fmt.Sprintf(", wider than --precision %.1f%%", 100*s.precision)
		}
	}
	if persist && s.limited {
		why += s.contradicted()
	}
	return false, fmt.Sprintf("the search did not converge: %s; %s", why, span)
}
