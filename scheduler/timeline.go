package scheduler

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Timeline gives the planned send instant of every request as an offset from
// the start of the run:
//
//	intended(i) = t0 + Offset(i)
//
// Offsets are computed from the request index, never accumulated from a
// running clock, so a generator that falls behind sends its backlog with the
// original intended times and the timeline never shifts. Offsets are
// non-decreasing in i.
type Timeline interface {
	// Offset returns the offset of request i in nanoseconds.
	Offset(i uint64) int64
	// Name describes the arrival process ("uniform", "poisson").
	Name() string
}

var (
	_ Timeline = Uniform{}
	_ Timeline = (*Poisson)(nil)
)

// Uniform sends at a fixed rate: Offset(i) = i / rate, in exact integer math.
type Uniform struct{ Rate Rate }

// Offset implements Timeline.
func (u Uniform) Offset(i uint64) int64 {
	if u.Rate.milli == 0 {
		return math.MaxInt64
	}
	// i * 1e12 / milli with a 128-bit intermediate: exact, no overflow.
	hi, lo := bits.Mul64(i, 1e12)
	if hi >= u.Rate.milli {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, u.Rate.milli)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Name implements Timeline.
func (Uniform) Name() string { return "uniform" }

// Poisson sends with exponentially distributed gaps of mean 1/rate, the
// arrivals of a Poisson process. The gaps come from a PCG stream seeded by
// Seed, so the same seed and rate give the same timeline on every run and
// machine. Offset(i) is the sum of the first i gaps; the sum is kept in a
// cursor, so calling Offset with increasing i (what the pacer does) costs one
// gap per index, and going back restarts from zero. Not safe for concurrent
// use.
type Poisson struct {
	rate  Rate
	seed  uint64
	rng   *rand.Rand
	next  uint64  // index whose offset is sum
	sum   float64 // offset of request next, in ns
	meanN float64 // mean gap in ns
}

// NewPoisson returns a Poisson timeline.
func NewPoisson(rate Rate, seed uint64) *Poisson {
	p := &Poisson{rate: rate, seed: seed}
	if rate.milli > 0 {
		p.meanN = 1e12 / float64(rate.milli)
	}
	p.reset()
	return p
}

func (p *Poisson) reset() {
	p.rng = rand.New(rand.NewPCG(p.seed, 0x9e3779b97f4a7c15))
	p.next, p.sum = 0, 0
}

// Offset implements Timeline. Request 0 is sent at offset 0.
func (p *Poisson) Offset(i uint64) int64 {
	if p.meanN == 0 {
		return math.MaxInt64
	}
	if i < p.next {
		p.reset()
	}
	for p.next < i {
		p.sum += p.rng.ExpFloat64() * p.meanN
		p.next++
	}
	if p.sum >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(p.sum)
}

// Name implements Timeline.
func (*Poisson) Name() string { return "poisson" }

// Count returns how many requests of tl fall before end (offset < end),
// stopping at limit.
func Count(tl Timeline, end int64, limit uint64) uint64 { return countFrom(tl, 0, end, limit) }

// countFrom is Count for a timeline known to have at least from requests
// before end: it walks on from there.
func countFrom(tl Timeline, from uint64, end int64, limit uint64) uint64 {
	n := from
	for n < limit && tl.Offset(n) < end {
		n++
	}
	return n
}
