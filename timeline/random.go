package timeline

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Exact samplers for the Poisson timeline: a Poisson variate for a block's
// count and a Binomial(n, 1/2) variate for splitting a count between the
// two halves of a span. Both are exact in distribution (up to float64
// rounding) for every mean and n the timeline can need, so a timeline of
// any rate is a true Poisson process.

// poissonInversionMax is the mean below which a Poisson variate is drawn
// by inversion (sequential search of the CDF); above it, by Hörmann's
// transformed rejection (PTRS), whose set-up assumes a mean of at least 10.
const poissonInversionMax = 10

// samplePoisson draws a Poisson variate of mean mu ≥ 0.
func samplePoisson(r *rand.Rand, mu float64) uint64 {
	if mu <= 0 {
		return 0
	}
	if mu < poissonInversionMax {
		return poissonInversion(r, mu)
	}
	return poissonPTRS(r, mu)
}

// poissonInversion walks the CDF from 0: about mu+1 steps.
func poissonInversion(r *rand.Rand, mu float64) uint64 {
	u := r.Float64()
	p := math.Exp(-mu)
	cdf := p
	k := uint64(0)
	for u > cdf {
		k++
		p *= mu / float64(k)
		if p == 0 { // the tail is below float64's reach; u lies in rounding error
			break
		}
		cdf += p
	}
	return k
}

// poissonPTRS is W. Hörmann, "The transformed rejection method for
// generating Poisson random variables", Insurance: Mathematics and
// Economics 12 (1993), algorithm PTRS, for mu ≥ 10. The final acceptance
// test uses logPoissonPMF, accurate also for means near 1e13 where
// -mu + k·log(mu) − lgamma(k+1) loses every digit to cancellation.
func poissonPTRS(r *rand.Rand, mu float64) uint64 {
	smu := math.Sqrt(mu)
	b := 0.931 + 2.53*smu
	a := -0.059 + 0.02483*b
	invAlpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + mu + 0.43)
		if k < 0 {
			continue
		}
		if us >= 0.07 && v <= vr {
			return uint64(k)
		}
		if us < 0.013 && v > us {
			continue
		}
		if math.Log(v)+math.Log(invAlpha)-math.Log(a/(us*us)+b) <= logPoissonPMF(k, mu) {
			return uint64(k)
		}
	}
}

// binomialBitsMax is the n up to which Binomial(n, 1/2) is the popcount of
// n random bits (at most 8 draws); above it, Hörmann's BTRS.
const binomialBitsMax = 512

// sampleHalfBinomial draws Binomial(n, 1/2): how many of n arrivals of a
// span fall in its first half.
func sampleHalfBinomial(r *rand.Rand, n uint64) uint64 {
	if n <= binomialBitsMax {
		k := 0
		for n >= 64 {
			k += bits.OnesCount64(r.Uint64())
			n -= 64
		}
		if n > 0 {
			k += bits.OnesCount64(r.Uint64() & (1<<n - 1))
		}
		return uint64(k)
	}
	return binomialBTRS(r, float64(n), 0.5)
}

// binomialBTRS is W. Hörmann, "The generation of binomial random
// variates", J. Statist. Comput. Simul. 46 (1993), algorithm BTRS, for
// n·p ≥ 10 and p ≤ 1/2. The acceptance test compares log-probabilities
// relative to the mode, computed with Loader's saddle-point terms so that
// it stays exact for n near 1e13.
func binomialBTRS(r *rand.Rand, n, p float64) uint64 {
	q := 1 - p
	spq := math.Sqrt(n * p * q)
	b := 1.15 + 2.53*spq
	a := -0.0873 + 0.0248*b + 0.01*p
	c := n*p + 0.5
	vr := 0.92 - 4.2/b
	alpha := (2.83 + 5.1/b) * spq
	m := math.Floor((n + 1) * p)
	logMode := logBinomialPMF(m, n, p)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + c)
		if k < 0 || k > n {
			continue
		}
		if us >= 0.07 && v <= vr {
			return uint64(k)
		}
		v = math.Log(v * alpha / (a/(us*us) + b))
		if v <= logBinomialPMF(k, n, p)-logMode {
			return uint64(k)
		}
	}
}

// logPoissonPMF is log P(K = k) for K ~ Poisson(mu), k a whole number.
func logPoissonPMF(k, mu float64) float64 {
	if k == 0 {
		return -mu
	}
	return -stirlingError(k) - bd0(k, mu) - 0.5*math.Log(2*math.Pi*k)
}

// logBinomialPMF is log P(K = k) for K ~ Binomial(n, p), k and n whole.
func logBinomialPMF(k, n, p float64) float64 {
	q := 1 - p
	switch k {
	case 0:
		return n * math.Log1p(-p)
	case n:
		return n * math.Log(p)
	}
	return stirlingError(n) - stirlingError(k) - stirlingError(n-k) -
		bd0(k, n*p) - bd0(n-k, n*q) + 0.5*math.Log(n/(2*math.Pi*k*(n-k)))
}

// stirlingError is log(n!) − log(√(2πn)·(n/e)^n), from C. Loader, "Fast
// and accurate computation of binomial probabilities" (2000).
func stirlingError(n float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if n <= 15 {
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	nn := n * n
	if n > 500 {
		return (s0 - s1/nn) / n
	}
	if n > 80 {
		return (s0 - (s1-s2/nn)/nn) / n
	}
	if n > 35 {
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 is x·log(x/np) + np − x, computed without cancellation when x is
// near np (Loader's deviance term).
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v2 := v * v
		for j := 1; j < 1000; j++ {
			ej *= v2
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/np) + np - x
}
