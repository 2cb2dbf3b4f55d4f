package scenarios

import (
	"math"
	"math/bits"
)

// Rand is a small, fast, seedable generator (SplitMix64) for filling slots.
// It is not safe for concurrent use: each sender owns one.
type Rand struct{ s uint64 }

// NewRand returns a generator; the same seed gives the same sequence.
func NewRand(seed uint64) *Rand { return &Rand{s: seed} }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Below returns a uniform number in [0, n); 0 when n is 0. It uses Lemire's
// multiply-shift with rejection, so there is no modulo bias.
func (r *Rand) Below(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	for {
		hi, lo := bits.Mul64(r.Uint64(), n)
		if lo >= n || lo >= (-n)%n {
			return hi
		}
	}
}

// Float64 returns a uniform number in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Norm returns a standard normal number (Box–Muller, one of the pair).
func (r *Rand) Norm() float64 {
	for {
		u := r.Float64()
		if u > 0 {
			return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*r.Float64())
		}
	}
}
