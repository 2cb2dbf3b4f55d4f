package stats

import (
	"math"
	"math/rand/v2"
)

// A simulated latency process, the known distribution the intervals are
// checked against: requests at a uniform rate, a service time that is
// log-normal around a level that drifts from interval to interval (an
// AR(1) on its logarithm), and stalls (Poisson in time) during which every
// request waits for the stall's end: latencies cluster in time as a
// server's pauses and a host's noise make them.
type process struct {
	perInterval int     // requests per interval
	median      float64 // service median, µs
	sigma       float64 // service log-sd
	driftPhi    float64 // AR(1) coefficient of the level from interval to interval
	driftSigma  float64 // its innovation's sd (log)
	stallRate   float64 // stalls per interval
	stallMin    float64 // stall length, uniform in [stallMin, stallMax] µs
	stallMax    float64
	runSigma    float64 // a level per run (log-sd): run-to-run spread
}

const intervalUs = 1e6

// run draws n intervals as histograms (0.1% log buckets), with its own
// generator.
func (p process) run(n int, rng *rand.Rand) []Hist {
	hs := make([]Hist, n)
	level := p.runSigma * rng.NormFloat64()
	drift := p.driftSigma / math.Sqrt(max(1e-12, 1-p.driftPhi*p.driftPhi)) * rng.NormFloat64()
	if p.driftSigma == 0 {
		drift = 0
	}
	counts := map[int64]int64{}
	gap := intervalUs / float64(p.perInterval)
	for i := range n {
		drift = p.driftPhi*drift + p.driftSigma*rng.NormFloat64()
		// The stalls of this interval, as [start, end) µs from its start.
		var stalls [][2]float64
		for k := poisson(rng, p.stallRate); k > 0; k-- {
			s := rng.Float64() * intervalUs
			stalls = append(stalls, [2]float64{s, s + p.stallMin + rng.Float64()*(p.stallMax-p.stallMin)})
		}
		clear(counts)
		for j := range p.perInterval {
			t := float64(j) * gap
			v := p.median * math.Exp(level+drift+p.sigma*rng.NormFloat64())
			for _, s := range stalls {
				if t >= s[0] && t < s[1] {
					v += s[1] - t
				}
			}
			counts[bucket(v)]++
		}
		hs[i] = histOf(counts)
	}
	return hs
}

// bucket is v's 0.1% log bucket's upper value (in ns): pacer's
// histograms keep three significant digits.
func bucket(us float64) int64 {
	k := math.Ceil(math.Log(max(us, 1)) / math.Log(1.001))
	return int64(math.Exp(k*math.Log(1.001)) * 1000)
}

func histOf(counts map[int64]int64) Hist {
	var h Hist
	for v := range counts {
		h.Values = append(h.Values, v)
	}
	sortInt64(h.Values)
	for _, v := range h.Values {
		h.Counts = append(h.Counts, counts[v])
	}
	return h
}

func sortInt64(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func poisson(rng *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// truth is the process's percentiles qs, from one long run.
func (p process) truth(qs []float64, intervals int, seed uint64) []float64 {
	q := p
	q.runSigma = 0
	return NewSeries(q.run(intervals, rand.New(rand.NewPCG(seed, 1)))).Percentiles(qs)
}
