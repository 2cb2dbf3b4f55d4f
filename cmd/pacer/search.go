package main

import (
	"fmt"
	"math"
)

// searchGrowth is the factor by which `sweep --search` raises the rate
// while every step meets the SLO (and lowers it while none does): 4 needs
// fewer steps than 2 to bracket a rate between 1k and 256k/s, and the
// bisection that follows is geometric, so the bracket's width costs only
// log2 log steps.
const searchGrowth = 4

// searchFloor is the lowest rate a search tries, in requests per second.
const searchFloor = 1.0

// rateSearch finds the highest rate that meets an SLO, from the verdicts
// of the steps it asks for: exponential growth from `from` until a step
// fails (or shrinking until one passes), then geometric bisection between
// the highest passing rate lo and the lowest failing rate hi until
// hi ≤ lo·(1+precision). The failing end of the final bracket must have
// been measured twice: on a shared machine a neighbour's burst of CPU
// fails a step that the server would pass, while noise cannot make a
// step pass that the server fails (it only adds latency). So the caller
// judges a rate measured again by its best measurement, and a bracket
// whose upper end passes the second time moves up. It asks for at most
// maxSteps steps. It is pure: no clock, no I/O.
type rateSearch struct {
	from, to  float64 // to = 0: no upper bound
	precision float64
	maxSteps  int

	steps  int
	lo, hi float64 // highest passing rate below hi, lowest failing rate (0: none)
	// verdict is each rate's verdict (on all its measurements), measured
	// how many times it was measured.
	verdict   map[float64]bool
	measured  map[float64]int
	done      bool
	converged bool
	reason    string
}

func newRateSearch(from, to, precision float64, maxSteps int) *rateSearch {
	return &rateSearch{from: from, to: to, precision: precision, maxSteps: maxSteps,
		verdict: map[float64]bool{}, measured: map[float64]int{}}
}

// first is the rate of the first step.
func (s *rateSearch) first() float64 {
	if s.to > 0 {
		return min(s.from, s.to)
	}
	return s.from
}

// record notes that rate, measured once more, now passes or fails (by its
// best measurement) and returns the rate of the next step; false when the
// search is over (see done, converged, reason and sustainable). hi is the
// lowest failing rate, lo the highest passing one below it. A marginal
// failure (close to the bound, as noise makes them) measured once is
// measured again at once.
func (s *rateSearch) record(rate float64, pass, marginal bool) (float64, bool) {
	s.steps++
	s.verdict[rate] = pass
	s.measured[rate]++
	s.lo, s.hi = 0, 0
	for r, ok := range s.verdict {
		if !ok && (s.hi == 0 || r < s.hi) {
			s.hi = r
		}
	}
	for r, ok := range s.verdict {
		if ok && r > s.lo && (s.hi == 0 || r < s.hi) {
			s.lo = r
		}
	}
	next, ok := s.plan()
	if ok && marginal && s.measured[rate] < 2 {
		next = rate
	}
	if ok && s.steps >= s.maxSteps {
		s.finish(s.bracketed(), fmt.Sprintf("stopped after %d steps (--max-steps)", s.steps))
		return 0, false
	}
	return next, ok
}

// bracketed reports whether lo and hi are within the precision.
func (s *rateSearch) bracketed() bool {
	return s.lo > 0 && s.hi > 0 && s.hi <= s.lo*(1+s.precision)
}

func (s *rateSearch) finish(converged bool, reason string) {
	s.done, s.converged, s.reason = true, converged, reason
}

// plan picks the next rate, or ends the search.
func (s *rateSearch) plan() (float64, bool) {
	switch {
	case s.hi == 0: // every step passed
		if s.to > 0 && s.lo >= s.to {
			s.finish(false, fmt.Sprintf("every rate up to --to %s/s met the SLO: the sustainable rate is at least that", formatRate(s.to)))
			return 0, false
		}
		next := searchRound(s.lo * searchGrowth)
		if s.to > 0 {
			next = min(next, s.to)
		}
		return next, true
	case s.lo == 0: // every step failed
		if s.hi == s.first() && s.measured[s.hi] < 2 {
			return s.hi, true // the first rate's failure must repeat before the search turns down
		}
		next := searchRound(s.hi / searchGrowth)
		if next < searchFloor {
			s.finish(false, fmt.Sprintf("no rate down to %s/s met the SLO", formatRate(s.hi)))
			return 0, false
		}
		return next, true
	case s.bracketed():
		return s.confirm()
	}
	next := searchRound(math.Sqrt(s.lo * s.hi))
	if next <= s.lo || next >= s.hi { // too close to split
		return s.confirm()
	}
	return next, true
}

// confirm ends a bracketed search once its failing end was measured
// twice; otherwise it measures it again.
func (s *rateSearch) confirm() (float64, bool) {
	if s.measured[s.hi] < 2 {
		return s.hi, true
	}
	s.finish(true, fmt.Sprintf("converged: %s/s passes, %s/s failed twice (within %.1f%%)",
		formatRate(s.lo), formatRate(s.hi), 100*s.precision))
	return 0, false
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

// formatRate prints a rate in requests per second without a needless
// fraction.
func formatRate(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3f", r)
}
