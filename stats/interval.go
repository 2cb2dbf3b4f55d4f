package stats

import (
	"errors"
	"math"
)

// Level is the confidence of the intervals pacer reports.
const Level = 0.95

// Method names how an interval was found, as the JSON's "method" fields
// spell it.
type Method string

const (
	// Runs: the spread between repeated runs. A percentile's interval
	// treats each run as a cluster of its requests (the pooled percentile,
	// with the variance of its distribution function between runs); a
	// change between two sides is Student's t (Welch) on the logarithms
	// of the per-run figures.
	Runs Method = "runs"
	// PairedRuns: an interleaved A/B (pacer ab), each round a pair run
	// side by side in time: Student's t on the per-round log ratios, so
	// that drift common to a round cancels.
	PairedRuns Method = "paired-runs"
	// RunsOneSide: one side has repeats, the other one run: the spread
	// between the repeated side's runs stands for both.
	RunsOneSide Method = "runs-one-side"
	// Blocks: one run, a block bootstrap over its intervals (blocks of
	// consecutive intervals resampled whole, so that what clusters in
	// time stays together). The spread between runs is not in it.
	Blocks Method = "blocks"
)

// Interval is an estimate with its confidence interval. Lo and Hi are on
// the estimate's scale; an end no data bound is -Inf or +Inf. N is what
// it rests on (runs, rounds or intervals), DF the degrees of freedom of
// its t quantile.
type Interval struct {
	Estimate, Lo, Hi float64
	Level            float64
	Method           Method
	N                int
	DF               float64
}

// Contains reports whether v lies in [Lo, Hi].
func (iv Interval) Contains(v float64) bool { return v >= iv.Lo && v <= iv.Hi }

// Scale is how a figure changes: relatively (latencies, throughput: the
// change is a ratio, its interval found on logarithms) or absolutely
// (error shares, which may be zero: the change is a difference).
type Scale uint8

const (
	Relative Scale = iota
	Absolute
)

// ErrTooFew is returned when there are too few runs or intervals for an
// interval: two runs, or MinIntervals intervals, at least.
var ErrTooFew = errors.New("too few runs or intervals for an interval")

// ErrNotPositive is returned for a relative figure that is zero or
// negative in some run: its logarithm does not exist.
var ErrNotPositive = errors.New("a figure that is not positive has no relative change")

// transform maps a figure to the scale its interval is found on.
func (s Scale) transform(v float64) float64 {
	if s == Relative {
		return math.Log(v)
	}
	return v
}

func meanSD(x []float64) (m, sd float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	if len(x) < 2 {
		return m, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}

func checkScale(s Scale, xs ...[]float64) error {
	for _, x := range xs {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) || (s == Relative && v <= 0) {
				return ErrNotPositive
			}
		}
	}
	return nil
}

// Change is how a candidate's figure differs from a baseline's, with the
// interval of the difference. For a Relative figure Rel and its interval
// are cand/base − 1 (0.1 is 10% higher); for an Absolute one, cand − base
// in the figure's unit.
type Change struct {
	Base, Cand float64
	Interval
	Scale Scale
	// NBase and NCand are the runs (or intervals) of each side.
	NBase, NCand int
}

// fromTransformed builds a Change from the difference d of transformed
// figures and its standard error se with df degrees of freedom.
func fromTransformed(s Scale, base, cand, d, se, df, level float64) (Interval, float64, float64) {
	t := StudentQuantile(1-(1-level)/2, df)
	lo, hi := d-t*se, d+t*se
	if se == 0 {
		lo, hi = d, d
	}
	if s == Relative {
		return Interval{Estimate: math.Expm1(d), Lo: math.Expm1(lo), Hi: math.Expm1(hi), Level: level, DF: df}, base, cand
	}
	return Interval{Estimate: d, Lo: lo, Hi: hi, Level: level, DF: df}, base, cand
}

// back maps a mean of transformed figures to the figure's scale (a
// geometric mean for Relative figures).
func (s Scale) back(m float64) float64 {
	if s == Relative {
		return math.Exp(m)
	}
	return m
}

// ChangeOverRuns compares the runs of two sides, not paired: Welch's t
// on the transformed per-run figures when both sides have two runs or
// more; with one run on one side, the other side's spread stands for
// both (RunsOneSide). Base and Cand are the sides' (geometric) means.
func ChangeOverRuns(base, cand []float64, s Scale, level float64) (Change, error) {
	nb, nc := len(base), len(cand)
	if nb == 0 || nc == 0 || nb+nc < 3 {
		return Change{}, ErrTooFew
	}
	if err := checkScale(s, base, cand); err != nil {
		return Change{}, err
	}
	tb, tc := make([]float64, nb), make([]float64, nc)
	for i, v := range base {
		tb[i] = s.transform(v)
	}
	for i, v := range cand {
		tc[i] = s.transform(v)
	}
	mb, sb := meanSD(tb)
	mc, sc := meanSD(tc)
	var se, df float64
	method := Runs
	switch {
	case nb >= 2 && nc >= 2:
		vb, vc := sb*sb/float64(nb), sc*sc/float64(nc)
		se = math.Sqrt(vb + vc)
		df = welchDF(vb, vc, nb, nc)
	case nb >= 2:
		se, df, method = sb*math.Sqrt(1/float64(nb)+1), float64(nb-1), RunsOneSide
	default:
		se, df, method = sc*math.Sqrt(1/float64(nc)+1), float64(nc-1), RunsOneSide
	}
	iv, b, c := fromTransformed(s, s.back(mb), s.back(mc), mc-mb, se, df, level)
	iv.Method, iv.N = method, nb+nc
	return Change{Base: b, Cand: c, Interval: iv, Scale: s, NBase: nb, NCand: nc}, nil
}

// welchDF is the Welch–Satterthwaite degrees of freedom of two variances
// of means vb and vc (NaN-free: both zero gives the pooled df).
func welchDF(vb, vc float64, nb, nc int) float64 {
	if vb+vc == 0 {
		return float64(nb + nc - 2)
	}
	return (vb + vc) * (vb + vc) / (vb*vb/float64(nb-1) + vc*vc/float64(nc-1))
}

// ChangePaired compares rounds run side by side: base[i] and cand[i]
// were measured in round i. Student's t on the per-round transformed
// differences (at least two rounds).
func ChangePaired(base, cand []float64, s Scale, level float64) (Change, error) {
	n := len(base)
	if n != len(cand) || n < 2 {
		return Change{}, ErrTooFew
	}
	if err := checkScale(s, base, cand); err != nil {
		return Change{}, err
	}
	d := make([]float64, n)
	var sb, sc float64
	for i := range base {
		tb, tc := s.transform(base[i]), s.transform(cand[i])
		d[i] = tc - tb
		sb += tb
		sc += tc
	}
	m, sd := meanSD(d)
	iv, b, c := fromTransformed(s, s.back(sb/float64(n)), s.back(sc/float64(n)), m, sd/math.Sqrt(float64(n)), float64(n-1), level)
	iv.Method, iv.N = PairedRuns, n
	return Change{Base: b, Cand: c, Interval: iv, Scale: s, NBase: n, NCand: n}, nil
}

// ChangeOfIntervals compares two single runs from their own intervals:
// each side's estimate with its standard error on the transformed scale
// (SE, from a block bootstrap), combined with Welch's degrees of
// freedom.
func ChangeOfIntervals(base, cand Estimate, s Scale, level float64) (Change, error) {
	if base.N < 2 || cand.N < 2 || base.DF <= 0 || cand.DF <= 0 {
		return Change{}, ErrTooFew
	}
	if err := checkScale(s, []float64{base.Value, cand.Value}); err != nil {
		return Change{}, err
	}
	vb, vc := base.SE*base.SE, cand.SE*cand.SE
	df := base.DF + cand.DF
	if vb+vc > 0 {
		df = (vb + vc) * (vb + vc) / (vb*vb/base.DF + vc*vc/cand.DF)
	}
	d := s.transform(cand.Value) - s.transform(base.Value)
	iv, b, c := fromTransformed(s, base.Value, cand.Value, d, math.Sqrt(vb+vc), df, level)
	iv.Method, iv.N = Blocks, base.N+cand.N
	return Change{Base: b, Cand: c, Interval: iv, Scale: s, NBase: base.N, NCand: cand.N}, nil
}

// Estimate is one run's figure with its standard error on its scale's
// transformed values (log for Relative), its degrees of freedom and the
// intervals it rests on.
type Estimate struct {
	Value, SE, DF float64
	N             int
}
