package main

import (
	"testing"
)

// runSearch drives a search with verdicts from pass (a failure below
// marginal times the limit is marginal) and returns the rates it
// measured.
func runSearch(s *rateSearch, pass func(step int, rate float64) bool, marginalBelow float64) []float64 {
	var rates []float64
	rate, ok := s.first(), true
	for i := 0; ok && i < 100; i++ {
		rates = append(rates, rate)
		p := pass(i, rate)
		rate, ok = s.record(rate, p, !p && rate < marginalBelow)
	}
	return rates
}

func TestRateSearch(t *testing.T) {
	below := func(limit float64) func(int, float64) bool {
		return func(_ int, r float64) bool { return r <= limit }
	}
	for _, c := range []struct {
		name           string
		from, to       float64
		maxSteps       int
		pass           func(int, float64) bool
		marginalBelow  float64 // failures below this rate are marginal
		converged      bool
		lo, hi         float64 // the sustainable rate's expected range
		maxRates       int
		wantFirstRates []float64
	}{
		{name: "embedded-like limit", from: 1000, maxSteps: 12, pass: below(5400), converged: true, lo: 5400 / 1.05, hi: 5400, maxRates: 12,
			wantFirstRates: []float64{1000, 4000, 16000, 8000, 5657}},
		// Near an M/M/1 limit failures are marginal up to 1.3× the limit:
		// each is measured twice at once, and the search still fits.
		{name: "embedded-like limit, marginal failures", from: 1000, maxSteps: 12, pass: below(5400), marginalBelow: 5400 * 1.3,
			converged: true, lo: 5400 / 1.05, hi: 5400, maxRates: 12},
		// A marginal failure that noise made (4000/s, the 2nd step) is
		// measured again at once and does not hold.
		{name: "a marginal unlucky failure", from: 1000, maxSteps: 12, pass: func(i int, r float64) bool { return r <= 5400 && i != 1 }, marginalBelow: 5400 * 1.3,
			converged: true, lo: 5400 / 1.05, hi: 5400, maxRates: 12},
		{name: "redis-like limit", from: 1000, maxSteps: 12, pass: below(61000), converged: true, lo: 61000 / 1.05, hi: 61000, maxRates: 12},
		// The first rate's failure is measured again before the search
		// turns down.
		{name: "limit below the start", from: 1000, maxSteps: 12, pass: below(180), converged: true, lo: 180 / 1.05, hi: 180, maxRates: 12,
			wantFirstRates: []float64{1000, 1000, 250, 63}},
		{name: "nothing passes", from: 1000, maxSteps: 12, pass: below(0), converged: false, lo: 0, hi: 0, maxRates: 7},
		{name: "everything up to --to passes", from: 1000, to: 50000, maxSteps: 12, pass: below(1e9), converged: false, lo: 50000, hi: 50000, maxRates: 4,
			wantFirstRates: []float64{1000, 4000, 16000, 50000}},
		{name: "step budget", from: 1000, maxSteps: 4, pass: below(5400), converged: false, lo: 4000, hi: 4000, maxRates: 4},
		// A pass is trusted: noise only adds latency, so a step that met
		// the SLO shows the server can (here a pass 5% above the limit,
		// at the 5th step, stands).
		{name: "a pass above the limit", from: 1000, maxSteps: 12, pass: func(i int, r float64) bool { return r <= 5400 || i == 4 },
			converged: true, lo: 5657, hi: 5657, maxRates: 12},
		// One unlucky failure far below the limit (4000/s, the 2nd step)
		// is found out when the bracket's upper end is measured again; the
		// search then resumes above it, and says so when the budget runs
		// out before it converges again.
		{name: "an unlucky failure", from: 1000, maxSteps: 12, pass: func(i int, r float64) bool { return r <= 5400 && i != 1 },
			converged: false, lo: 4000, hi: 5400, maxRates: 12},
		{name: "an unlucky failure, a larger budget", from: 1000, maxSteps: 20, pass: func(i int, r float64) bool { return r <= 5400 && i != 1 },
			converged: true, lo: 5400 / 1.05, hi: 5400, maxRates: 20},
	} {
		s := newRateSearch(c.from, c.to, 0.05, c.maxSteps)
		rates := runSearch(s, c.pass, c.marginalBelow)
		got := s.sustainable()
		t.Logf("%s: %v -> %v (%s)", c.name, rates, got, s.reason)
		if !s.done || s.converged != c.converged || got < c.lo || got > c.hi || len(rates) > c.maxRates || s.steps != len(rates) {
			t.Errorf("%s: rates %v: done %v converged %v (%s), sustainable %v; want converged %v, %v..%v, at most %d steps",
				c.name, rates, s.done, s.converged, s.reason, got, c.converged, c.lo, c.hi, c.maxRates)
		}
		for i, r := range c.wantFirstRates {
			if i >= len(rates) || rates[i] != r {
				t.Errorf("%s: rates %v, want them to begin with %v", c.name, rates, c.wantFirstRates)
				break
			}
		}
		if c.converged && s.measured[s.hi] < 2 {
			t.Errorf("%s: %v failed only %d times", c.name, s.hi, s.measured[s.hi])
		}
	}
}
