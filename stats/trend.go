package stats

import (
	"math"
	"slices"
)

// Mann–Kendall's test for a monotone trend in a series, one-sided (an
// increase): no assumption on the distribution of the values, ties
// allowed. A sweep's step is unsustainable when its latency and its
// queue both rise through it; a stream's consumer lag that rises through
// a run is a consumer group that does not keep up.
//
//	S = Σ_{i<j} sign(x_j − x_i)     large S: later values larger
//
// With n values the smallest p-value is 1/n! (every value above the one
// before): 5 values reach 0.0083, 4 cannot reach 1%.

// exactTrendMax is the largest n whose p-value is computed exactly;
// above it the Normal approximation (with continuity correction and the
// tie correction of the variance) is used, as Mann–Kendall tables do.
const exactTrendMax = 10

// MannKendall returns Kendall's S of xs in the order given and the
// one-sided p-value P(S' ≥ S) of an increasing trend under the
// hypothesis that every order of the values is equally likely (1 for
// fewer than 2 values or none distinct). Up to exactTrendMax values the
// distribution of S is exact, ties included; above, Normal.
func MannKendall(xs []float64) (s int, p float64) {
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
