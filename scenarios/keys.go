package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pacer-load/pacer/internal/usage"
)

// KeyDist draws key numbers in [0, N) for __key__ and __rand_int__ slots.
type KeyDist interface {
	// Draw returns the next key number.
	Draw(r *Rand) uint64
	// String prints the distribution as parseKeyDist reads it.
	String() string
}

var (
	_ KeyDist = Uniform{}
	_ KeyDist = (*Sequential)(nil)
	_ KeyDist = (*Zipf)(nil)
	_ KeyDist = (*Gaussian)(nil)
)

// parseKeyDist reads --key-dist over n keys: uniform, sequential,
// zipf:S (exponent 0 < S <= 10, e.g. 0.99) or gaussian:MEAN,SD (in keys;
// MEAN may be a share of n written with %, e.g. gaussian:50%,1000).
func parseKeyDist(s string, n uint64) (KeyDist, error) {
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "uniform":
		if arg == "" {
			return Uniform{N: n}, nil
		}
	case "sequential":
		if arg == "" {
			return NewSequential(n), nil
		}
	case "zipf":
		e, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(e > 0 && e <= MaxZipfExponent) {
			return nil, usage.Option("key-dist", "{key-dist} %q: want zipf:S with an exponent S above 0 and at most %d, such as zipf:0.99", s, MaxZipfExponent)
		}
		if n == 0 {
			return nil, usage.Option("key-dist", "{key-dist} %q needs a keyspace ({r} N)", s)
		}
		return newZipf(n, e), nil
	case "gaussian":
		bad := usage.Option("key-dist", "{key-dist} %q: want gaussian:MEAN,SD with finite numbers and SD above 0, such as gaussian:50000,1000 or gaussian:50%%,1000", s)
		ms, sds, ok := strings.Cut(arg, ",")
		sd, err2 := strconv.ParseFloat(sds, 64)
		var mean float64
		var err1 error
		pct, isPct := strings.CutSuffix(ms, "%")
		if isPct {
			var p float64
			p, err1 = strconv.ParseFloat(pct, 64)
			if err1 == nil && !(p >= 0 && p < 100) {
				return nil, usage.Option("key-dist", "{key-dist} %q: a MEAN in %% must be at least 0%% and below 100%%", s)
			}
			mean = p / 100 * float64(n)
		} else {
			mean, err1 = strconv.ParseFloat(ms, 64)
		}
		if !ok || err1 != nil || err2 != nil || !finite(mean) || !finite(sd) || !(sd > 0) {
			return nil, bad
		}
		if n == 0 {
			return nil, usage.Option("key-dist", "{key-dist} %q needs a keyspace ({r} N)", s)
		}
		g, err := newGaussian(n, mean, sd)
		if err != nil {
			return nil, usage.Option("key-dist", "{key-dist} %q: %w", s, err)
		}
		return g, nil
	}
	return nil, usage.Option("key-dist", "{key-dist} %q: want uniform, sequential, zipf:S or gaussian:MEAN,SD", s)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Uniform draws every key with the same probability (redis-benchmark's -r).
type Uniform struct{ N uint64 }

// Draw implements KeyDist.
func (u Uniform) Draw(r *Rand) uint64 { return r.Below(u.N) }

func (Uniform) String() string { return "uniform" }

// Sequential hands out 0, 1, 2, … N-1, 0, … from one counter shared by
// every stream made from it, so parallel connections cover the keyspace
// once per lap between them (what pacer fill needs).
type Sequential struct {
	N    uint64
	next *atomic.Uint64
}

// NewSequential returns a sequential distribution over n keys.
func NewSequential(n uint64) *Sequential { return &Sequential{N: n, next: new(atomic.Uint64)} }

// Draw implements KeyDist.
func (s *Sequential) Draw(*Rand) uint64 {
	i := s.next.Add(1) - 1
	if s.N == 0 {
		return 0
	}
	return i % s.N
}

func (*Sequential) String() string { return "sequential" }

// MaxZipfExponent bounds zipf:S. Above it nearly every draw is key 0.
const MaxZipfExponent = 10

// Zipf draws key k (rank k+1) with probability proportional to
// 1/(k+1)^S, for any S > 0, by rejection-inversion (W. Hörmann and
// G. Derflinger, "Rejection-inversion to generate variates from monotone
// discrete distributions", 1996): O(1) per draw with no table, so a
// keyspace of a billion costs nothing to set up. Key 0 is the hottest.
type Zipf struct {
	N                  uint64
	S                  float64
	hX1, hN, threshold float64
	oneMinusS          float64
}

// newZipf returns a Zipf distribution over n keys with exponent s > 0.
func newZipf(n uint64, s float64) *Zipf {
	z := &Zipf{N: n, S: s, oneMinusS: 1 - s}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(float64(n) + 0.5)
	z.threshold = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// h is the (unnormalised) density 1/x^S.
func (z *Zipf) h(x float64) float64 { return math.Exp(-z.S * math.Log(x)) }

// hIntegral is the integral of h from 1 to x: (x^(1-S) − 1)/(1 − S), or
// log x when S = 1, computed without cancellation near S = 1.
func (z *Zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1OverX(z.oneMinusS*lx) * lx
}

func (z *Zipf) hIntegralInverse(y float64) float64 {
	t := y * z.oneMinusS
	if t < -1 {
		t = -1 // rounding at the lower end
	}
	return math.Exp(log1pOverX(t) * y)
}

// expm1OverX is (e^x − 1)/x, 1 at 0.
func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x/2*(1+x/3*(1+x/4))
}

// log1pOverX is log(1 + x)/x, 1 at 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(1.0/2-x*(1.0/3-x/4))
}

// maxZipfRounds caps the rejection loop of a Zipf draw. A round is
// accepted with probability well above 1/2 for every S, so the cap is
// never reached in practice (odds below 2^-64); it makes the worst case
// bounded whatever floating point does at extreme S and N.
const maxZipfRounds = 64

// Draw implements KeyDist.
func (z *Zipf) Draw(r *Rand) uint64 {
	if z.N == 0 {
		return 0
	}
	k := 1.0
	for range maxZipfRounds {
		u := z.hN + r.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k = math.Floor(x + 0.5)
		if !(k >= 1) { // also NaN
			k = 1
		} else if k > float64(z.N) {
			k = float64(z.N)
		}
		if k-x <= z.threshold || u >= z.hIntegral(k+0.5)-z.h(k) {
			break
		}
	}
	// k <= N as a float64; N near 2^64 rounds up to 2^64, which does not
	// convert: clamp in integers.
	if k >= 1<<64 {
		return z.N - 1
	}
	return min(uint64(k), z.N) - 1
}

func (z *Zipf) String() string { return "zipf:" + strconv.FormatFloat(z.S, 'g', -1, 64) }

// MinGaussianShare is the smallest share of a gaussian:MEAN,SD bell that
// the keyspace must hold. Below it almost every draw of the bell would
// fall outside [0, N), so the keys drawn would not follow the curve the
// user asked for (and a redraw loop would never end): refused instead.
const MinGaussianShare = 1e-6

// Gaussian draws key round(X) for X normal(Mean, SD) conditioned on the
// key lying in [0, N): a hot region around Mean. Every draw is one uniform
// number mapped through the inverse of the normal CDF restricted to the
// keyspace (a truncated normal), so it is O(1) with no retry loop.
type Gaussian struct {
	n        uint64
	mean, sd float64
	// Draws are erfinv(lo + U·width), U uniform in [0, 1): lo is
	// erf(a/√2) and width erf(b/√2) − erf(a/√2), where [a, b) is the
	// keyspace [−0.5, N − 0.5) in standard units.
	lo, width float64
	top       float64 // N as a float64
}

// newGaussian returns a Gaussian over n keys, or an error when the
// parameters are not finite, SD is not above 0, the mean lies outside
// [0, n), or the keyspace holds less than MinGaussianShare of the bell.
func newGaussian(n uint64, mean, sd float64) (*Gaussian, error) {
	switch {
	case n == 0:
		return nil, errors.New("a gaussian needs a keyspace of at least 1 key")
	case !finite(mean) || !finite(sd) || !(sd > 0):
		return nil, errors.New("the MEAN and SD of a gaussian must be finite numbers, SD above 0")
	case !(mean >= 0 && mean < float64(n)):
		return nil, fmt.Errorf("the mean must lie in the keyspace [0, %d)", n)
	}
	// Keys are rounded, so key k holds [k − 0.5, k + 0.5).
	a := (-0.5 - mean) / sd
	b := (float64(n) - 0.5 - mean) / sd
	g := &Gaussian{n: n, mean: mean, sd: sd, top: float64(n)}
	// a < 0 always (mean >= 0). When b <= 0 too, both ends lie in the left
	// tail, where erfc keeps the precision that 1 + erf would lose.
	if b <= 0 {
		ca, cb := math.Erfc(-a/math.Sqrt2), math.Erfc(-b/math.Sqrt2)
		g.lo, g.width = ca-1, cb-ca
	} else {
		ea := math.Erf(a / math.Sqrt2)
		g.lo, g.width = ea, math.Erf(b/math.Sqrt2)-ea
	}
	if share := g.width / 2; !(share >= MinGaussianShare) {
		return nil, fmt.Errorf("the keyspace [0, %d) holds only %.2g%% of gaussian:%g,%g (draws are rounded to keys: those below -0.5 or from %g up fall outside), less than the %g%% pacer needs: bring the mean inside or narrow the SD (uniform spreads keys evenly)",
			n, 100*share, mean, sd, float64(n)-0.5, 100*MinGaussianShare)
	}
	return g, nil
}

// Draw implements KeyDist.
func (g *Gaussian) Draw(r *Rand) uint64 {
	z := math.Erfinv(g.lo + r.Float64()*g.width)
	v := math.Round(g.mean + g.sd*math.Sqrt2*z)
	// Rounding at the ends of [lo, lo+width) may step one key out, and
	// erfinv(±1) is infinite: clamp (a NaN, which cannot arise, lands on 0).
	switch {
	case !(v >= 0):
		return 0
	case v >= g.top:
		return g.n - 1
	}
	return min(uint64(v), g.n-1)
}

func (g *Gaussian) String() string {
	return fmt.Sprintf("gaussian:%g,%g", g.mean, g.sd)
}
