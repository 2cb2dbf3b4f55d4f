package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// searchGrowth is the factor by which `sweep --search` raises the rate
// while every step meets the SLO (and lowers it while none does): 4 needs
// fewer steps than 2 to bracket a rate between 1k and 256k/s, and the
// bisection that follows is geometric, so the bracket's width costs only
// log2 log steps.
const searchGrowth = 4

// searchFloor is the lowest rate a search tries, in requests per second.
const searchFloor = 1.0

// stepVerdict is what a search learns from one step.
type stepVerdict int

const (
	stepFail stepVerdict = iota
	stepPass
	// stepUnjudged: the step had too few samples to judge a percentile
	// clause of the SLO (neither pass nor fail).
	stepUnjudged
	// stepUncertain: a percentile's 95% interval held the bound, even
	// after the step was lengthened: the server's limit is about here,
	// and more steps at this rate would not say on which side.
	stepUncertain
	// stepInconclusive: the step missed the SLO, but the miss was the
	// client's or its host's (or the load was not delivered): neither
	// the server's failure nor a pass. The rate is measured again.
	stepInconclusive
	// stepSureFail: the step was aborted at once, its oldest request past
	// --abort-after within its first interval: the server was overloaded
	// from the start, which no neighbour's burst of a second or two makes.
	// It counts as a failure that repeated (no step is spent measuring it
	// again).
	stepSureFail
)

// maxRemeasure is how many times a search measures an inconclusive rate
// again before it leaves it unjudged.
const maxRemeasure = 2

// rateSearch finds the highest rate that meets an SLO, from the verdicts
// of the steps it asks for: exponential growth from `from` until a step
// fails (or shrinking until one passes), then geometric bisection between
// the highest passing rate lo and the lowest failing rate hi above it.
// It is pure: no clock, no I/O.
//
// Noise on a shared machine only adds latency: a neighbour's burst of CPU
// fails a step that the server would pass, but cannot make a step pass
// that the server fails. So a rate is judged by its best measurement (one
// pass and it passes; lo is the highest rate that ever passed), and a
// failure is believed only when it repeats. Such an episode of noise
// lasts 10–20 s, longer than a step, so the two failures must not be
// adjacent in time: a failing rate is measured again only after another
// step ran, never right after itself. The search converges when a rate
// that failed twice, non-adjacently, lies within the precision above lo:
//
//	rate ──────────────────────────────────────────────────►
//	        lo (passed once)    c (failed twice, not back to back)
//	        │◄── c ≤ lo·(1+precision) ──►│
//
// When it measures a failure again: the final bracket's failing end once
// the bracket is within the precision; and earlier, right after a step
// below it passed (the noise is then likely over), whenever the steps
// left still cover what a search without noise needs from there (see
// need), or whatever they do when the failure came next to one that
// turned out to be noise (see suspect): a failure that noise made is
// then found out before the bisection spends its steps below it. The
// bracket's failing end, just measured, is not measured again at once:
// the search bisects once more instead, and comes back to it.
//
// Some steps say neither pass nor fail. An inconclusive rate (the miss
// was the client host's) is measured again after another step, at most
// maxRemeasure times; an uncertain one (the percentile could not be told
// from its bound) is not. Until then, and for good once they are left
// unjudged, such rates are barriers: the search narrows the gap below the
// lowest of them from lo, and the gap above the highest of them to hi,
// each to the precision, and then ends; the sustainable rate is then
// known to lie between lo and hi and no closer.
//
//	lo ──── gap ──── barrier ──── gap ──── hi
//
// A failure below lo contradicts lo. Before the search claims to have
// converged it measures the highest such failure again; one that fails
// twice persists, and the search ends without claiming convergence.
//
// Some rates cannot be judged at all: a percentile clause needs samples
// beyond it (histo.MinTailSamples), and a step of bounded length at a low
// rate has too few. floor is the lowest rate the caller can judge; a step
// that still comes out unjudged (stepUnjudged) raises it above that step's
// rate. The search never goes below it: where it would, it measures the
// floor itself, and if that fails it ends saying so ("cannot judge p99.9
// below 367/s with steps of 30s").
type rateSearch struct {
	from, to  float64 // to = 0: no upper bound
	precision float64
	maxSteps  int
	// floor is the lowest rate the steps can judge (0: any); what cannot
	// be judged below it and with what steps, in words, for the reason:
	// "p99.9" and "with steps of 30s".
	floor               float64
	floorWhat, floorHow string

	steps int
	// last is the rate of the latest step and lastPass its verdict.
	last     float64
	lastPass bool
	// passed holds every rate that passed at least once, failed the
	// failures of each rate that never passed, unjudged the highest rate
	// whose step could not be judged; uncertain the rates whose steps
	// were uncertain, inconclusive how many times each rate was.
	passed       map[float64]bool
	failed       map[float64]int
	unjudged     float64
	uncertain    map[float64]bool
	inconclusive map[float64]int
	// climbed is the rate the search went up to from an inconclusive
	// first step (see plan; 0: none).
	climbed float64
	// passedAt and failedAt hold the steps at which each rate passed and
	// failed.
	passedAt, failedAt map[float64][]int
	// lo is the highest rate that passed, hi the lowest that failed
	// above it (0: none).
	lo, hi    float64
	done      bool
	converged bool
	// limited: the search stopped at maxSteps; toReached: every rate up
	// to `to` passed.
	limited, toReached bool
	reason             string
}

func newRateSearch(from, to, precision float64, maxSteps int) *rateSearch {
	return &rateSearch{from: from, to: to, precision: precision, maxSteps: maxSteps,
		passed: map[float64]bool{}, failed: map[float64]int{}, uncertain: map[float64]bool{}, inconclusive: map[float64]int{},
		passedAt: map[float64][]int{}, failedAt: map[float64][]int{}}
}

// first is the rate of the first step: from, raised to the lowest rate
// the steps can judge, capped by to.
func (s *rateSearch) first() float64 {
	r := max(s.from, s.lowest())
	if s.to > 0 {
		r = min(r, s.to)
	}
	return r
}

// lowest is the lowest rate the search may measure.
func (s *rateSearch) lowest() float64 {
	return max(searchFloor, searchCeil(s.floor))
}

// record notes rate's verdict, measured once more, and returns the rate
// of the next step; false when the search is over (see done, converged,
// reason and sustainable).
func (s *rateSearch) record(rate float64, v stepVerdict) (float64, bool) {
	s.steps++
	s.last, s.lastPass = rate, v == stepPass
	switch v {
	case stepPass:
		s.passed[rate] = true
		s.passedAt[rate] = append(s.passedAt[rate], s.steps-1)
	case stepFail:
		s.failed[rate]++
		s.failedAt[rate] = append(s.failedAt[rate], s.steps-1)
	case stepSureFail:
		s.failed[rate] += 2
		s.failedAt[rate] = append(s.failedAt[rate], s.steps-1)
	case stepUncertain:
		s.uncertain[rate] = true
	case stepInconclusive:
		s.inconclusive[rate]++
	default:
		s.unjudged = max(s.unjudged, rate)
	}
	s.lo, s.hi = 0, 0
	for r := range s.passed {
		s.lo = max(s.lo, r)
	}
	for r := range s.failed {
		if !s.passed[r] && r > s.lo && (s.hi == 0 || r < s.hi) {
			s.hi = r
		}
	}
	next, ok := s.plan()
	if ok && s.steps >= s.maxSteps {
		s.limited = true
		s.finish(false, fmt.Sprintf("stopped after %d steps (--max-steps)", s.steps))
		return 0, false
	}
	return next, ok
}

// failures is how many times rate failed (0 once it passed).
func (s *rateSearch) failures(rate float64) int {
	if s.passed[rate] {
		return 0
	}
	return s.failed[rate]
}

func (s *rateSearch) finish(converged bool, reason string) {
	s.done, s.converged, s.reason = true, converged, reason
}

// judgeable reports whether a step at r can be judged: at or above the
// floor and above every rate whose step could not be.
func (s *rateSearch) judgeable(r float64) bool {
	return r >= s.lowest() && r > s.unjudged
}

// judged reports whether r passed or failed at least once.
func (s *rateSearch) judged(r float64) bool { return s.passed[r] || s.failed[r] > 0 }

// pending reports whether r is an inconclusive rate to measure again.
// The rate climbed to from an inconclusive first step waits for a pass
// with no rate the client could not send between it and that pass (see
// plan): a client that cannot send the first rate cannot send it either,
// and a search that comes down is not held up by it; but a pass just
// below it says the host was busy for the first two steps only, and it is
// measured again. Marking it as measured its last time left it the
// barrier below which a search crept up and ended inconclusive one step
// short of converging (3,830/s passed, "too busy to tell at 4000/s (3
// times)", measured once).
func (s *rateSearch) pending(r float64) bool {
	if r == s.climbed && (s.lo == 0 || s.untoldBetween(s.lo, r)) {
		return false
	}
	return !s.judged(r) && !s.uncertain[r] && s.inconclusive[r] > 0 && s.inconclusive[r] <= maxRemeasure
}

// untoldBetween reports whether a rate between lo and hi (both
// excluded) was inconclusive and never judged.
func (s *rateSearch) untoldBetween(lo, hi float64) bool {
	for q, n := range s.inconclusive {
		if n > 0 && q > lo && q < hi && !s.judged(q) {
			return true
		}
	}
	return false
}

// open reports whether r lies between lo and hi (above lo when no rate
// failed above it), where what it says matters.
func (s *rateSearch) open(r float64) bool {
	return r > s.lo && (s.hi == 0 || r < s.hi)
}

// barriers are the rates between lo and hi that said neither pass nor
// fail (uncertain, or inconclusive), in increasing order.
func (s *rateSearch) barriers() []float64 {
	var out []float64
	for r := range s.uncertain {
		if !s.judged(r) && s.open(r) && r > s.unjudged {
			out = append(out, r)
		}
	}
	for r, n := range s.inconclusive {
		if n > 0 && !s.judged(r) && !s.uncertain[r] && s.open(r) && r > s.unjudged {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// remeasure is the inconclusive rate to measure again now: the lowest
// between lo and hi that was not the latest step (0: none).
func (s *rateSearch) remeasure() float64 {
	q := 0.0
	for r := range s.inconclusive {
		if s.pending(r) && s.open(r) && r != s.last && s.judgeable(r) && (q == 0 || r < q) {
			q = r
		}
	}
	return q
}

// cannotJudge words why the search cannot go below where it is: "cannot
// judge p99.9 below 367/s with steps of 30s".
func (s *rateSearch) cannotJudge() string {
	what := s.floorWhat
	if what == "" {
		what = "the SLO"
	}
	if s.unjudged >= s.lowest() {
		return strings.TrimSpace(fmt.Sprintf("cannot judge %s at %s/s or below %s", what, formatRate(s.unjudged), s.floorHow))
	}
	return strings.TrimSpace(fmt.Sprintf("cannot judge %s below %s/s %s", what, formatRate(s.lowest()), s.floorHow))
}

// plan picks the next rate, or ends the search.
func (s *rateSearch) plan() (float64, bool) {
	if q := s.remeasure(); q > 0 {
		return q, true
	}
	bars := s.barriers()
	switch {
	case s.steps == 1 && s.hi == 0 && s.lo == 0 && s.pending(s.last):
		// The first step was the client host's: it says nothing of the
		// server, and a pass above it would leave it behind, so the
		// search goes up from it as from a pass. Going down instead cost
		// two steps (a lower rate, then this one again) of the twelve a
		// search of the embedded target needs near its limit. A client
		// that cannot send this rate cannot send the next one either:
		// that step is not measured again before a rate passed
		// (pending), and the search comes down from the lower.
		next, ok := s.grow(s.last)
		s.climbed = next
		return next, ok
	case s.lo == 0 && (s.hi > 0 || len(bars) > 0): // nothing passed: shrink
		top := s.hi
		if len(bars) > 0 && (top == 0 || bars[0] < top) {
			top = bars[0]
		}
		return s.shrink(top)
	case len(bars) > 0:
		return s.around(bars)
	case s.hi == 0: // no failure above lo: grow
		return s.grow(max(s.lo, s.unjudged))
	}
	return s.bracket()
}

// grow goes up from base: ×searchGrowth, up to `to`.
func (s *rateSearch) grow(base float64) (float64, bool) {
	if s.to > 0 && base >= s.to {
		switch {
		case s.lo >= s.to:
			if c := s.contradiction(); c > 0 {
				return c, true
			}
			s.toReached = len(s.contradictions(false)) == 0
			s.finish(false, fmt.Sprintf("every rate up to --to %s/s met the SLO: the sustainable rate is at least that%s", formatRate(s.to), s.contradicted()))
		case s.unjudged >= base:
			s.finish(false, fmt.Sprintf("%s, and --to is %s/s", s.cannotJudge(), formatRate(s.to)))
		default:
			s.finish(false, fmt.Sprintf("%s, and --to is %s/s", s.untold(), formatRate(s.to)))
		}
		return 0, false
	}
	next := searchRound(base * searchGrowth)
	if s.to > 0 {
		next = min(next, s.to)
	}
	return next, true
}

// shrink goes down from top, the lowest rate measured above lo (a
// failure, or a barrier), while nothing passed.
func (s *rateSearch) shrink(top float64) (float64, bool) {
	next := searchRound(top / searchGrowth)
	if s.judgeable(next) {
		return next, true
	}
	next = s.lowest()
	if s.judgeable(next) && next < top && s.failed[next] == 0 && !s.uncertain[next] && s.inconclusive[next] == 0 {
		return next, true
	}
	if f := s.first(); s.failures(f) == 1 && s.last != f {
		// Before it gives up, the first rate's failure repeats: latency
		// need not fall with the rate (idle connections wake slowly), and
		// a first step failed by noise would otherwise have sent the
		// search down for good.
		return f, true
	}
	what := fmt.Sprintf("no rate down to %s/s met the SLO", formatRate(top))
	if u := s.untold(); u != "" {
		what += "; " + u
	}
	if s.floor == 0 && s.unjudged == 0 {
		s.finish(false, what)
	} else {
		s.finish(false, what+"; "+s.cannotJudge())
	}
	return 0, false
}

// around plans the next step when barriers lie above lo: the gap below
// the lowest of them, then the gap above the highest (growing when no
// rate failed above it), each to the precision.
func (s *rateSearch) around(bars []float64) (float64, bool) {
	p := 1 + s.precision
	low, high := bars[0], bars[len(bars)-1]
	base := max(s.lo, s.unjudged)
	if low > base*p {
		if mid := searchRound(math.Sqrt(base * low)); mid > base && mid < low && s.judgeable(mid) {
			return mid, true
		}
	}
	top := high
	high = max(high, s.unjudged)
	switch {
	case s.hi == 0 && s.uncertain[top]:
		// The percentile held its bound: the limit is about here, and a
		// higher rate fails.
		return s.grow(high)
	case s.hi == 0 && s.pending(top):
		return s.lo, true // a step between two of its measurements
	case s.hi == 0:
		// The host was too busy to tell here: more load will not make it
		// less so.
		s.finish(false, fmt.Sprintf("%s/s passes, and above it %s", formatRate(s.lo), s.untold()))
		return 0, false
	}
	if s.hi > high*p {
		if mid := searchRound(math.Sqrt(high * s.hi)); mid > high && mid < s.hi && s.judgeable(mid) {
			return mid, true
		}
	}
	// Both gaps are within the precision. An inconclusive rate just
	// measured is measured again after one more step: hi's failure
	// repeated, or lo's pass.
	if s.pending(s.last) {
		if s.hi != s.last && s.failures(s.hi) < 2 {
			return s.hi, true
		}
		return s.lo, true
	}
	s.finish(false, fmt.Sprintf("%s/s passes, %s/s failed, and between them %s", formatRate(s.lo), formatRate(s.hi), s.untold()))
	return 0, false
}

// untold words the barriers: "p99 could not be told from its bound at
// 4000/s; the client host was too busy to tell at 2000/s (3 times)"; ""
// without any.
func (s *rateSearch) untold() string {
	var unc, inc []float64
	for r := range s.uncertain {
		if !s.judged(r) {
			unc = append(unc, r)
		}
	}
	for r, n := range s.inconclusive {
		if n > 0 && !s.judged(r) && !s.uncertain[r] {
			inc = append(inc, r)
		}
	}
	slices.Sort(unc)
	slices.Sort(inc)
	var parts []string
	if len(unc) > 0 {
		what := s.floorWhat
		if what == "" {
			what = "the SLO's percentile"
		}
		parts = append(parts, fmt.Sprintf("%s could not be told from its bound at %s", what, rateList(unc, nil)))
	}
	if len(inc) > 0 {
		parts = append(parts, "the client host was too busy to tell at "+rateList(inc, s.inconclusive))
	}
	return strings.Join(parts, "; ")
}

// rateList words rates: "2000/s, 2828/s", with how many times each was
// measured when times is given.
func rateList(rates []float64, times map[float64]int) string {
	out := make([]string, len(rates))
	for i, r := range rates {
		out[i] = formatRate(r) + "/s"
		if times != nil && times[r] > 1 {
			out[i] += fmt.Sprintf(" (%d times)", times[r])
		}
	}
	return strings.Join(out, ", ")
}

// bracket plans the next step between lo, which passed, and hi, which
// failed, with nothing unjudged between them.
func (s *rateSearch) bracket() (float64, bool) {
	p := 1 + s.precision
	confirmed := 0.0
	for r, n := range s.failed {
		if n >= 2 && !s.passed[r] && r > s.lo && r <= s.lo*p && (confirmed == 0 || r < confirmed) {
			confirmed = r
		}
	}
	if confirmed > 0 {
		if f := s.first(); f > s.lo && s.failures(f) == 1 && s.last != f {
			// The answer lies below the first rate, which failed once:
			// latency need not fall with the rate, so a first step
			// failed by noise would leave the search far below the
			// server's limit (a redis-server search on this VM settled
			// on 37/s). The first rate's failure repeats before the
			// search believes it.
			return f, true
		}
		if c := s.contradiction(); c > 0 {
			return c, true
		}
		if len(s.contradictions(false)) > 0 {
			s.finish(false, fmt.Sprintf("%s/s passes, %s/s failed twice (within %.1f%%)%s",
				formatRate(s.lo), formatRate(confirmed), 100*s.precision, s.contradicted()))
			return 0, false
		}
		s.finish(true, fmt.Sprintf("converged: %s/s passes, %s/s failed twice (within %.1f%%)",
			formatRate(s.lo), formatRate(confirmed), 100*s.precision))
		return 0, false
	}
	mid := searchRound(math.Sqrt(s.lo * s.hi))
	if s.unjudged > s.lo {
		mid = searchRound(math.Sqrt(max(s.lo, s.unjudged) * s.hi))
	}
	split := mid > s.lo && mid < s.hi && s.judgeable(mid)
	if s.hi > s.lo*p && !split {
		// Steps came out unjudged between lo and hi (too few samples
		// although their rates should have had enough).
		s.finish(false, fmt.Sprintf("%s, between %s/s and %s/s", s.cannotJudge(), formatRate(s.lo), formatRate(s.hi)))
		return 0, false
	}
	if s.hi <= s.lo*p {
		// Within the precision: measure a failure there again, the
		// lowest one that was not the latest step.
		c := 0.0
		for r, n := range s.failed {
			if n > 0 && !s.passed[r] && r > s.lo && r <= s.lo*p && r != s.last && (c == 0 || r < c) {
				c = r
			}
		}
		switch {
		case c > 0:
			return c, true
		case split:
			// The only candidate was just measured: bisect once more
			// and come back to it.
			return mid, true
		case s.hi != s.last:
			return s.hi, true // too close to split: the end itself
		}
		// Nothing to split and the end just measured: measure lo again,
		// a step that only separates the two measurements of hi.
		return s.lo, true
	}
	// Wider than the precision. Right after a pass below it, a failure
	// measured once is measured again when the steps allow it.
	if s.lastPass && s.failures(s.hi) == 1 && s.hi != s.last && (s.steps+1+s.need(s.lo, s.hi) <= s.maxSteps || s.suspect(s.hi)) {
		return s.hi, true
	}
	return mid, true
}

// suspect reports whether rate failed next to a step whose failure was
// noise (its rate passed since): a burst spans consecutive steps.
func (s *rateSearch) suspect(rate float64) bool {
	for _, i := range s.failedAt[rate] {
		for r, at := range s.failedAt {
			if !s.passed[r] {
				continue
			}
			for _, j := range at {
				if j == i-1 || j == i+1 {
					return true
				}
			}
		}
	}
	return false
}

// need is the most steps a search without noise takes to converge from
// the bracket [lo, hi] with hi measured twice: the bisections down to the
// precision, the second measurement of the final failing end, and one
// step between that end's two measurements when the last bisection is
// the one that failed.
func (s *rateSearch) need(lo, hi float64) int {
	n := 0
	for r := hi / lo; r > 1+s.precision; r = math.Sqrt(r) {
		n++
	}
	return n + 2
}

// sustainable is the highest rate that met the SLO (0: none).
func (s *rateSearch) sustainable() float64 { return s.lo }

// searchRound rounds a rate to whole requests per second (to thousandths
// below 10/s), the precision rates are printed with.
func searchRound(r float64) float64 {
	if r >= 10 {
		return math.Round(r)
	}
	return math.Round(r*1000) / 1000
}

// searchCeil rounds a rate up to the precision searchRound keeps.
func searchCeil(r float64) float64 {
	if r >= 10 {
		return math.Ceil(r)
	}
	return math.Ceil(r*1000) / 1000
}

// formatRate prints a rate in requests per second without a needless
// fraction.
func formatRate(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3f", r)
}
