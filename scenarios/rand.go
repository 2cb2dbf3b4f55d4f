package scenarios

import (
	"math/bits"
	"math/rand/v2"
)

// pcgStream is the second half of every PCG seed: fixed, so the same
// --seed gives the same sequence in every run and build.
const pcgStream = 0x9e3779b97f4a7c15

// Rand is the seedable generator that fills slots: math/rand/v2's PCG
// (128-bit state, DXSM output), held by value and called directly, so a
// draw is neither an interface call nor an allocation. It is not safe for
// concurrent use: each sender owns one.
type Rand struct{ src rand.PCG }

// NewRand returns a generator; the same seed gives the same sequence.
func NewRand(seed uint64) *Rand {
	r := &Rand{}
	r.src.Seed(seed, pcgStream)
	return r
}

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 { return r.src.Uint64() }

// Below returns a uniform number in [0, n); 0 when n is 0. It uses Lemire's
// multiply-shift with rejection, so there is no modulo bias; a draw is
// rejected with probability below 1/2, so the loop ends after 1 to 2
// rounds on average.
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
