package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// KeyDist draws key numbers in [0, N) for __key__ and __rand_int__ slots.
type KeyDist interface {
	// Draw returns the next key number.
	Draw(r *Rand) uint64
	// String prints the distribution as ParseKeyDist reads it.
	String() string
}

var (
	_ KeyDist = Uniform{}
	_ KeyDist = (*Sequential)(nil)
	_ KeyDist = (*Zipf)(nil)
	_ KeyDist = Gaussian{}
)

// ParseKeyDist reads --key-dist over n keys: uniform, sequential,
// zipf:S (exponent S > 0, e.g. 0.99) or gaussian:MEAN,SD (in keys; MEAN
// may be a fraction of n written with %, e.g. gaussian:50%,1000).
func ParseKeyDist(s string, n uint64) (KeyDist, error) {
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
		if err != nil || e <= 0 || e > 10 || math.IsNaN(e) {
			return nil, fmt.Errorf("--key-dist %q: want zipf:S with an exponent S above 0, such as zipf:0.99", s)
		}
		if n == 0 {
			return nil, fmt.Errorf("--key-dist %q needs a keyspace (-r N)", s)
		}
		return NewZipf(n, e), nil
	case "gaussian":
		ms, sds, ok := strings.Cut(arg, ",")
		sd, err2 := strconv.ParseFloat(sds, 64)
		var mean float64
		var err1 error
		if strings.HasSuffix(ms, "%") {
			var pct float64
			pct, err1 = strconv.ParseFloat(strings.TrimSuffix(ms, "%"), 64)
			mean = pct / 100 * float64(n)
		} else {
			mean, err1 = strconv.ParseFloat(ms, 64)
		}
		if !ok || err1 != nil || err2 != nil || sd <= 0 || math.IsNaN(mean) || math.IsNaN(sd) {
			return nil, fmt.Errorf("--key-dist %q: want gaussian:MEAN,SD such as gaussian:50000,1000 or gaussian:50%%,1000", s)
		}
		if n == 0 {
			return nil, fmt.Errorf("--key-dist %q needs a keyspace (-r N)", s)
		}
		if mean < 0 || mean >= float64(n) {
			return nil, fmt.Errorf("--key-dist %q: the mean must lie in the keyspace [0, %d)", s, n)
		}
		return Gaussian{N: n, Mean: mean, SD: sd}, nil
	}
	return nil, fmt.Errorf("--key-dist %q: want uniform, sequential, zipf:S or gaussian:MEAN,SD", s)
}

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

// NewZipf returns a Zipf distribution over n keys with exponent s > 0.
func NewZipf(n uint64, s float64) *Zipf {
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

// Draw implements KeyDist.
func (z *Zipf) Draw(r *Rand) uint64 {
	for {
		u := z.hN + r.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > float64(z.N) {
			k = float64(z.N)
		}
		if k-x <= z.threshold || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k) - 1
		}
	}
}

func (z *Zipf) String() string { return "zipf:" + strconv.FormatFloat(z.S, 'g', -1, 64) }

// Gaussian draws round(normal(Mean, SD)), redrawn until it falls in
// [0, N): a hot region around Mean.
type Gaussian struct {
	N        uint64
	Mean, SD float64
}

// Draw implements KeyDist.
func (g Gaussian) Draw(r *Rand) uint64 {
	for {
		v := math.Round(g.Mean + g.SD*r.Norm())
		if v >= 0 && v < float64(g.N) {
			return uint64(v)
		}
	}
}

func (g Gaussian) String() string {
	return fmt.Sprintf("gaussian:%g,%g", g.Mean, g.SD)
}
