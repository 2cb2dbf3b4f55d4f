package timeline

import (
	"math"
	"math/rand/v2"
	"testing"
)

// chiSquare compares draws with a probability mass function over the
// values whose expected count is at least 5 (the rest pooled in the
// tails) and returns the statistic and its degrees of freedom.
func chiSquare(counts map[uint64]float64, n float64, lo, hi uint64, pmf func(k uint64) float64) (float64, int) {
	chi, df := 0.0, -1
	below, aboveP := 0.0, 1.0
	obsBelow, obsAbove := 0.0, 0.0
	for k, c := range counts {
		if k < lo {
			obsBelow += c
		} else if k > hi {
			obsAbove += c
		}
	}
	for k := uint64(0); k < lo; k++ {
		below += pmf(k)
	}
	aboveP -= below
	for k := lo; k <= hi; k++ {
		p := pmf(k)
		aboveP -= p
		e := n * p
		d := counts[k] - e
		chi += d * d / e
		df++
	}
	for _, t := range [][2]float64{{obsBelow, below}, {obsAbove, aboveP}} {
		if e := n * t[1]; e >= 5 {
			d := t[0] - e
			chi += d * d / e
			df++
		}
	}
	return chi, df
}

// TestSamplersMatchTheirDistributions: chi-square goodness of fit of the
// Poisson sampler (inversion and PTRS) and the Binomial(n, ½) sampler
// (popcount and BTRS) against their exact probabilities, with a fixed seed.
// A correct sampler gives a statistic near df; the bound is df + 6√(2df).
func TestSamplersMatchTheirDistributions(t *testing.T) {
	t.Parallel()
	const draws = 200_000
	r := rand.New(rand.NewPCG(11, 12))
	check := func(name string, sample func() uint64, mean, sd float64, pmf func(k uint64) float64) {
		counts := map[uint64]float64{}
		for range draws {
			counts[sample()]++
		}
		lo := uint64(max(0, math.Floor(mean-4*sd)))
		hi := uint64(math.Ceil(mean + 4*sd))
		chi, df := chiSquare(counts, draws, lo, hi, pmf)
		if limit := float64(df) + 6*math.Sqrt(2*float64(df)); chi > limit {
			t.Errorf("%s: chi-square %.1f with %d degrees of freedom (limit %.1f)", name, chi, df, limit)
		}
	}
	for _, mu := range []float64{0.3, 4, 9.99, 10, 37.5, 1e4, 3e6} {
		check("poisson "+RatePerSecond(mu).String(), func() uint64 { return samplePoisson(r, mu) }, mu, math.Sqrt(mu),
			func(k uint64) float64 { return math.Exp(logPoissonPMF(float64(k), mu)) })
	}
	for _, n := range []uint64{1, 63, 64, 65, 512, 513, 2000, 1e7} {
		check("binomial "+RatePerSecond(float64(n)).String(), func() uint64 { return sampleHalfBinomial(r, n) },
			float64(n)/2, math.Sqrt(float64(n))/2,
			func(k uint64) float64 { return math.Exp(logBinomialPMF(float64(k), float64(n), 0.5)) })
	}
}

// TestSamplersAtHugeMeans: at the means the top rate gives a block (about
// 1.8e13), the standardized mean and variance of the draws are right.
func TestSamplersAtHugeMeans(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const draws = 20_000
	moments := func(name string, sample func() uint64, mean, variance float64) {
		s, s2 := 0.0, 0.0
		for range draws {
			z := (float64(sample()) - mean) / math.Sqrt(variance)
			s += z
			s2 += z * z
		}
		m, v := s/draws, s2/draws-(s/draws)*(s/draws)
		// The mean of 20000 standard normals is within 5/√20000 ≈ 0.035.
		if math.Abs(m) > 0.035 || math.Abs(v-1) > 0.06 {
			t.Errorf("%s: standardized mean %.4f, variance %.4f; want 0 and 1", name, m, v)
		}
	}
	mu := 1.7592186044416e13
	moments("poisson", func() uint64 { return samplePoisson(r, mu) }, mu, mu)
	n := uint64(1.7592186044416e13)
	moments("binomial", func() uint64 { return sampleHalfBinomial(r, n) }, float64(n)/2, float64(n)/4)
}

// TestLogPMFs checks the saddle-point log-probabilities against direct
// sums where those are exact enough.
func TestLogPMFs(t *testing.T) {
	for _, tc := range []struct{ k, mu float64 }{{1, 0.5}, {3, 4}, {20, 15}, {100, 120}, {1000, 1000}} {
		lg, _ := math.Lgamma(tc.k + 1)
		want := -tc.mu + tc.k*math.Log(tc.mu) - lg
		if got := logPoissonPMF(tc.k, tc.mu); math.Abs(got-want) > 1e-9 {
			t.Errorf("logPoissonPMF(%v, %v) = %v, want %v", tc.k, tc.mu, got, want)
		}
	}
	for _, tc := range []struct{ k, n float64 }{{1, 3}, {5, 10}, {40, 100}, {600, 1000}} {
		a, _ := math.Lgamma(tc.n + 1)
		b, _ := math.Lgamma(tc.k + 1)
		c, _ := math.Lgamma(tc.n - tc.k + 1)
		want := a - b - c + tc.n*math.Log(0.5)
		if got := logBinomialPMF(tc.k, tc.n, 0.5); math.Abs(got-want) > 1e-9 {
			t.Errorf("logBinomialPMF(%v, %v) = %v, want %v", tc.k, tc.n, got, want)
		}
	}
	// Probabilities sum to one.
	sum := 0.0
	for k := 0.0; k < 400; k++ {
		sum += math.Exp(logPoissonPMF(k, 200))
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("Poisson(200) probabilities sum to %v", sum)
	}
}
