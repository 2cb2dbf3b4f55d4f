package histo

import (
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// How much a sample can say about its percentiles.
//
// A percentile p of n samples rests on the n·(1−p) samples above it: with
// fewer than MinTailSamples the value is one of the few largest samples,
// and another run would give a different one. Insufficient says so.
//
// Its 95% confidence interval comes from order statistics and needs no
// assumption about the distribution: the number Y of samples at or below
// the true quantile ξ is Binomial(n, p), and the k-th smallest sample X(k)
// is above ξ exactly when Y < k, so
//
//	P(X(j) ≤ ξ ≤ X(k)) = P(j ≤ Y ≤ k−1) = F(k−1) − F(j−1)
//
// with F the binomial CDF. RankCI picks the largest j with F(j−1) ≤ α/2
// and the smallest k with F(k−1) ≥ 1−α/2, so the coverage is at least
// 1−α; PercentileCI reads X(j) and X(k) from a histogram.

// MinTailSamples is the number of samples a percentile needs beyond it.
const MinTailSamples = 10

// Insufficient reports whether n samples are too few for percentile p
// (in percent, as HdrHistogram takes it): n·(1−p/100) < MinTailSamples.
func Insufficient(n int64, p float64) bool {
	return float64(n)*(1-p/100) < MinTailSamples-1e-9
}

// exactWindow bounds the binomial terms RankCI sums exactly; beyond it
// (n·p·(1−p) above about 7·10^8) the Normal approximation is used.
const exactWindow = 1_000_000

// RankCI returns the 1-based ranks lo and hi of the order statistics that
// bound the q-quantile (0 < q < 1) of n samples with confidence at least
// conf (0.95 for a 95% interval). lo is 0 when no sample bounds it below
// with that confidence, hi is n+1 when none bounds it above. It sums the
// binomial probabilities exactly around the mean (where all but a
// negligible mass lies) and falls back on the Normal approximation, with
// a continuity correction, for very large n.
func RankCI(n int64, q, conf float64) (lo, hi int64) {
	if n <= 0 || !(q > 0 && q < 1) || !(conf > 0 && conf < 1) {
		return 0, n + 1
	}
	alpha := 1 - conf
	nf := float64(n)
	sd := math.Sqrt(nf * q * (1 - q))
	z := normalQuantile(1 - alpha/2)
	w := int64(math.Ceil(12*sd)) + 20
	if 2*w > exactWindow {
		lo = int64(math.Floor(nf*q + 0.5 - z*sd))
		hi = int64(math.Ceil(nf*q + 0.5 + z*sd))
		return min(max(lo, 0), n+1), min(max(hi, 0), n+1)
	}
	mean := int64(nf * q)
	from, to := max(0, mean-w), min(n, mean+w)
	// logC is log(n!); the terms are exp(log pmf), summed from the left.
	logN, _ := math.Lgamma(nf + 1)
	lq, lp := math.Log(q), math.Log1p(-q)
	cdf := make([]float64, to-from+1) // cdf[i] = F(from+i)
	sum := 0.0
	for x := from; x <= to; x++ {
		a, _ := math.Lgamma(float64(x) + 1)
		b, _ := math.Lgamma(float64(n-x) + 1)
		sum += math.Exp(logN - a - b + float64(x)*lq + float64(n-x)*lp)
		cdf[x-from] = sum
	}
	F := func(x int64) float64 {
		switch {
		case x < from:
			return 0
		case x >= to:
			if to == n {
				return 1
			}
			return cdf[len(cdf)-1]
		}
		return cdf[x-from]
	}
	// lo: the largest j with F(j−1) ≤ α/2; F grows, so search upwards.
	lo = 0
	for j := max(from, 1); j <= to+1 && F(j-1) <= alpha/2; j++ {
		lo = j
	}
	if lo == 0 && from > 1 {
		lo = from // F(from−1) is negligible
	}
	// hi: the smallest k with F(k−1) ≥ 1−α/2.
	hi = n + 1
	for k := max(from, 1); k <= n+1; k++ {
		if F(k-1) >= 1-alpha/2 {
			hi = k
			break
		}
		if k > to+1 {
			break
		}
	}
	return lo, hi
}

// normalQuantile returns the p-quantile of the standard Normal
// distribution, by bisection on math.Erf (ample for a confidence level).
func normalQuantile(p float64) float64 {
	lo, hi := -10.0, 10.0
	for range 200 {
		mid := (lo + hi) / 2
		if 0.5*(1+math.Erf(mid/math.Sqrt2)) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// valueAtRank returns the r-th smallest recorded value of h (1-based): the
// lowest value equivalent to it when low is set, the highest otherwise
// (HdrHistogram keeps values only to their bucket, so a confidence bound
// takes the outer edge). It returns 0 for a rank outside [1, count].
func valueAtRank(h *hdrhistogram.Histogram, r int64, low bool) int64 {
	if h == nil || r < 1 || r > h.TotalCount() {
		return 0
	}
	var cum int64
	for _, b := range h.Distribution() {
		if cum += b.Count; cum >= r {
			if low {
				return b.From
			}
			return b.To
		}
	}
	return 0
}

// PercentileCI returns the 95% confidence interval of percentile p (in
// percent) of h's samples, in h's units: lo is valid when okLo, hi when
// okHi (a percentile near the end of a small sample has no bound on that
// side within the sample).
func PercentileCI(h *hdrhistogram.Histogram, p float64) (lo, hi int64, okLo, okHi bool) {
	if h == nil || h.TotalCount() == 0 {
		return 0, 0, false, false
	}
	n := h.TotalCount()
	j, k := RankCI(n, p/100, 0.95)
	if j >= 1 {
		lo, okLo = valueAtRank(h, j, true), true
	}
	if k <= n {
		hi, okHi = valueAtRank(h, k, false), true
	}
	return lo, hi, okLo, okHi
}

// Median returns the median of vs (the mean of the middle two for an even
// count), without changing vs; 0 for none.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
