package sweep

import (
	"fmt"
	"math"
	"slices"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// A step whose queue grows is not sustainable, whatever its percentiles.
//
// At a rate the server cannot keep up with, the requests in flight pile
// up and every request waits longer than the one before: the step's
// latency climbs from its first interval to its last, and a step that
// ends before the queue reaches the bound would pass. Such a step is
// read from its interval series with a one-sided Mann–Kendall test for
// an increasing trend (no assumption on the distribution; ties allowed):
//
//	S = Σ_{i<j} sign(x_j − x_i)     large S: later values larger
//
// on two series, the response p50 of each interval and the requests in
// flight at its end, and the step fails as unsustainable only when both
// rise at trendAlpha. Both, because each alone has another reading: a
// p50 that creeps up with a steady queue is the host (its hiccups come
// and go), and in-flight counts that grow while the latency stays flat
// are a burst of arrivals, not a backlog; a queue that grows raises the
// two together (Little's law at a constant rate). The settle is not
// measured, and the drain after the timeline (replies still coming, the
// queue emptying) is left out.
//
// With n intervals the smallest p-value is 1/n! (every value above the
// one before): 5 intervals reach 0.0083, 4 cannot reach 1%. So a step of
// the default 5 s with 1 s intervals fails as unsustainable only when
// both series rise at every interval.
const trendAlpha = 0.01

// exactTrendMax is the largest n whose p-value is computed exactly;
// above it the Normal approximation (with continuity correction and the
// tie correction of the variance) is used, as Mann–Kendall tables do.
const exactTrendMax = 10

// mannKendall returns Kendall's S of xs in the order given and the
// one-sided p-value P(S' ≥ S) of an increasing trend under the
// hypothesis that every order of the values is equally likely (1 for
// fewer than 2 values or none distinct). Up to exactTrendMax values the
// distribution of S is exact, ties included; above, Normal.
func mannKendall(xs []float64) (s int, p float64) {
	n := len(xs)
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case xs[j] > xs[i]:
				s++
			case xs[j] < xs[i]:
				s--
			}
		}
	}
	ties := tieGroups(xs)
	if n < 2 || len(ties) == 1 {
		return s, 1
	}
	if n <= exactTrendMax {
		return s, exactTrendP(n, ties, s)
	}
	v := float64(n*(n-1)*(2*n+5)) / 18
	for _, t := range ties {
		v -= float64(t*(t-1)*(2*t+5)) / 18
	}
	var z float64
	switch {
	case s > 0:
		z = float64(s-1) / math.Sqrt(v)
	case s < 0:
		z = float64(s+1) / math.Sqrt(v)
	}
	return s, 0.5 * math.Erfc(z/math.Sqrt2)
}

// tieGroups is the size of each group of equal values in xs.
func tieGroups(xs []float64) []int {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var out []int
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		out = append(out, j-i)
		i = j
	}
	return out
}

// exactTrendP is P(S ≥ s) for n values in groups of equal values of the
// sizes ties, every order equally likely. With M the pairs of unequal
// values and Q the pairs out of order (inversions), S = M − 2Q; the
// number of distinct orders with Q inversions is the coefficient of q^Q
// in the q-multinomial [n; t₁, …, t_k]_q = [n]_q! / ∏ [t_i]_q!, where
// [m]_q! = ∏_{i≤m} (1 + q + … + q^{i−1}) (without ties, the Mahonian
// numbers). It is computed with exact integers: ∏ over the factors of
// the numerator, then an exact division by each factor of the
// denominator.
func exactTrendP(n int, ties []int, s int) float64 {
	maxQ := n * (n - 1) / 2
	poly := make([]int64, maxQ+2) // room for the × (1 − q) below
	poly[0] = 1
	deg := 0
	// × (1 + q + … + q^{i−1}) for i = 2..n.
	for i := 2; i <= n; i++ {
		next := make([]int64, maxQ+2)
		for d := 0; d <= deg; d++ {
			for k := 0; k < i; k++ {
				next[d+k] += poly[d]
			}
		}
		poly, deg = next, deg+i-1
	}
	// ÷ (1 + q + … + q^{i−1}) for i = 2..t of each tie group: × (1 − q),
	// then ÷ (1 − q^i), both exact on the coefficients.
	for _, t := range ties {
		for i := 2; i <= t; i++ {
			for d := deg + 1; d >= 1; d-- {
				poly[d] -= poly[d-1]
			}
			deg++
			for d := i; d <= deg; d++ {
				poly[d] += poly[d-i]
			}
			deg -= i // the quotient's degree: what lies above it is 0
		}
	}
	m := maxQ
	for _, t := range ties {
		m -= t * (t - 1) / 2
	}
	var total, tail int64
	for q := 0; q <= deg; q++ {
		total += poly[q]
		if m-2*q >= s {
			tail += poly[q]
		}
	}
	return float64(tail) / float64(total)
}

// stepSeries is a step's measured intervals as the trend test reads them:
// each interval's response p50 (in ms; intervals without a reply are left
// out of this series) and its requests in flight at its end. Only the
// intervals of the timeline count: full ones that the timeline sent into
// (at least half the requests its rate plans for an interval); those of
// the drain after it, where the queue only empties, and the series' last,
// are left out.
func stepSeries(r *scheduler.Result) (p50, inFlight []float64, err error) {
	ivs := r.Intervals
	if len(ivs) > 0 {
		ivs = ivs[:len(ivs)-1]
	}
	planned := r.TargetRate.PerSecond() * r.Interval.Seconds()
	for _, iv := range ivs {
		if r.Interval > 0 && iv.Duration != r.Interval || iv.Counts.Scheduled == 0 || float64(iv.Counts.Scheduled) < planned/2 {
			continue
		}
		inFlight = append(inFlight, float64(iv.InFlight))
		if iv.Response.Empty() {
			continue
		}
		h, err := iv.Response.Histogram()
		if err != nil {
			return nil, nil, err
		}
		p50 = append(p50, float64(h.ValueAtQuantile(50))/1e6)
	}
	return p50, inFlight, nil
}

// pointTrend tests each step of a point for a growing queue and returns
// the step nearest to one (the largest of its two p-values smallest),
// Rising when any step's two p-values are below trendAlpha divided by the
// number of steps (Bonferroni: a point of several steps gets no more
// chances to fail than one of a single step). nil when no step had two
// measured intervals.
func pointTrend(steps []*scheduler.Result) (*report.StepTrend, error) {
	var best *report.StepTrend
	alpha := trendAlpha / float64(max(1, len(steps)))
	for _, st := range steps {
		p50, inFlight, err := stepSeries(st)
		if err != nil {
			return nil, err
		}
		if len(inFlight) < 2 {
			continue // a step shorter than two intervals has no trend
		}
		t := &report.StepTrend{Intervals: len(inFlight), Alpha: trendAlpha}
		t.P50S, t.P50P = mannKendall(p50)
		t.InFlightS, t.InFlightP = mannKendall(inFlight)
		t.Rising = t.P50P < alpha && t.InFlightP < alpha
		t.P50P, t.InFlightP = roundP(t.P50P), roundP(t.InFlightP)
		if best == nil || t.Rising && !best.Rising || t.Rising == best.Rising && max(t.P50P, t.InFlightP) < max(best.P50P, best.InFlightP) {
			best = t
		}
	}
	return best, nil
}

// roundP keeps a p-value to 4 significant digits.
func roundP(p float64) float64 {
	if p <= 0 {
		return 0
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(p)))
	return math.Round(p*scale) / scale
}

// trendWhy words a rising trend for the step table's notes.
func trendWhy(t *report.StepTrend) string {
	return fmt.Sprintf("unsustainable: the response p50 rose through the step (Mann–Kendall S = %d over %d intervals, p = %.2g) and so did the requests in flight (S = %d, p = %.2g), at α = %g",
		t.P50S, t.Intervals, t.P50P, t.InFlightS, t.InFlightP, t.Alpha)
}
