package stats

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Bootstrap sizes.
const (
	// Resamples is how many block bootstrap resamples an interval draws.
	Resamples = 2000
	// MinIntervals is the fewest intervals a run's own interval rests on.
	MinIntervals = 5
	// MinTail is the fewest samples a percentile needs beyond it (as
	// histo.MinTailSamples).
	MinTail = 10
)

// HistOf reads an HdrHistogram as the bootstrap does: each non-empty
// bucket at its highest equivalent value, the value ValueAtQuantile
// reports. A nil histogram is empty.
func HistOf(h *hdrhistogram.Histogram) Hist {
	var out Hist
	if h == nil || h.TotalCount() == 0 {
		return out
	}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out.Values = append(out.Values, b.To)
			out.Counts = append(out.Counts, b.Count)
		}
	}
	return out
}

// PercentileInterval is a run's percentile with its confidence interval
// (Lo and Hi in the series' unit; an unbounded end is ±Inf) and, for
// comparisons, its Estimate (standard error of its logarithm).
type PercentileInterval struct {
	Interval
	Estimate Estimate
}

// PercentileIntervals returns the percentiles qs (in percent) of the
// whole series with their confidence intervals at level, from a circular
// block bootstrap over its intervals (blocks of BlockLength(n)
// consecutive intervals), inverted through the run's own distribution
// (Woodruff's method): the bootstrap gives the standard error se of the
// share F of values at or below the percentile's value, and the interval
// is the run's percentiles at p ± t·se, t Student's with (number of
// blocks − 1) degrees of freedom, the bootstrap's standard error scaled
// by √(b/(b−1)) for its b blocks (the bootstrap's variance of a mean of b
// blocks is (b−1)/b of the unbiased one). Reading the ends off the distribution
// keeps them where the data are, across the gap between a service time
// and a stall, where a bootstrap of the percentile itself jumps.
//
// It returns ErrTooFew with fewer than MinIntervals intervals; a
// percentile with fewer than MinTail samples beyond it gets an
// interval unbounded above. The seed makes the result repeatable.
func (s *Series) PercentileIntervals(qs []float64, level float64, seed uint64) ([]PercentileInterval, error) {
	n := s.Len()
	if n < MinIntervals {
		return nil, ErrTooFew
	}
	total := s.Count()
	if total == 0 {
		return nil, ErrTooFew
	}
	l := BlockLength(n)
	b := float64(n) / float64(l)
	df := b - 1
	t := StudentQuantile(1-(1-level)/2, df)
	est := s.Percentiles(qs)
	out := make([]PercentileInterval, len(qs))
	for i, q := range qs {
		p := q / 100
		y := s.countsAtOrBelow(est[i])
		se := s.bootstrapShare(y, l, seed+uint64(i)) * math.Sqrt(b/(b-1))
		iv := Interval{Estimate: est[i], Level: level, Method: Blocks, N: n, DF: df}
		iv.Lo, iv.Hi = s.quantileAt(p-t*se, -1), s.quantileAt(p+t*se, 1)
		if float64(total)*(1-p) < MinTail {
			iv.Hi = math.Inf(1)
		}
		// The standard error of the logarithm, through the same inversion
		// one standard error either side.
		e := Estimate{Value: est[i], SE: math.Inf(1), DF: df, N: n}
		if lo, hi := s.quantileAt(p-se, -1), s.quantileAt(p+se, 1); lo > 0 && !math.IsInf(hi, 1) && est[i] > 0 && !math.IsInf(iv.Hi, 1) {
			e.SE = (math.Log(hi) - math.Log(lo)) / 2
		}
		out[i] = PercentileInterval{Interval: iv, Estimate: e}
	}
	return out, nil
}

// quantileAt is the run's value at share p of its values; beyond the
// data it is 0 below (side −1) or +Inf above (side 1).
func (s *Series) quantileAt(p float64, side int) float64 {
	switch {
	case side < 0 && p <= 0:
		return 0
	case side > 0 && p >= 1:
		return math.Inf(1)
	}
	return s.Percentiles([]float64{100 * p})[0]
}

// bootstrapShare is the bootstrap standard error of Σy/Σtotals over
// resamples of the intervals in blocks of l.
func (s *Series) bootstrapShare(y []int64, l int, seed uint64) float64 {
	r := newResampler(s.Len(), l, seed)
	shares := make([]float64, 0, Resamples)
	for range Resamples {
		var num, den float64
		for _, i := range r.next() {
			num += float64(y[i])
			den += float64(s.totals[i])
		}
		if den > 0 {
			shares = append(shares, num/den)
		}
	}
	if len(shares) < 2 {
		return 0
	}
	_, sd := meanSD(shares)
	return sd
}

// Ratio is a figure of a run that is a ratio of sums over its intervals:
// completed requests over seconds (throughput), errors over scheduled
// requests (error share).
type Ratio struct {
	Num, Den []float64
}

// Interval returns Σnum/Σden with its confidence interval at level, on
// scale sc, from a circular block bootstrap over the intervals (as
// PercentileIntervals), and its Estimate for comparisons.
func (r Ratio) Interval(sc Scale, level float64, seed uint64) (Interval, Estimate, error) {
	n := len(r.Num)
	if n < MinIntervals || len(r.Den) != n {
		return Interval{}, Estimate{}, ErrTooFew
	}
	var num, den float64
	for i := range n {
		num += r.Num[i]
		den += r.Den[i]
	}
	if den <= 0 {
		return Interval{}, Estimate{}, ErrTooFew
	}
	v := num / den
	if sc == Relative && v <= 0 {
		return Interval{}, Estimate{}, ErrNotPositive
	}
	l := BlockLength(n)
	b := float64(n) / float64(l)
	rs := newResampler(n, l, seed)
	var xs []float64
	for range Resamples {
		var a, d float64
		for _, i := range rs.next() {
			a += r.Num[i]
			d += r.Den[i]
		}
		if d > 0 && (sc == Absolute || a > 0) {
			xs = append(xs, sc.transform(a/d))
		}
	}
	var se float64
	if len(xs) >= 2 {
		_, se = meanSD(xs)
		se *= math.Sqrt(b / (b - 1))
	}
	df := b - 1
	t := StudentQuantile(1-(1-level)/2, df)
	m := sc.transform(v)
	iv := Interval{Estimate: v, Lo: sc.back(m - t*se), Hi: sc.back(m + t*se), Level: level, Method: Blocks, N: n, DF: df}
	return iv, Estimate{Value: v, SE: se, DF: df, N: n}, nil
}

// PooledPercentileIntervals returns the percentiles qs of several runs
// pooled (each run a histogram) with intervals that hold the spread
// between the runs: each run is one cluster of its requests, and the
// standard error of the pooled share at or below each percentile comes
// from the runs' own shares (the cluster variance, Student's t with runs
// − 1 degrees of freedom), inverted through the pooled distribution as
// PercentileIntervals does. At least two runs.
func PooledPercentileIntervals(runs []Hist, qs []float64, level float64) ([]Interval, error) {
	k := len(runs)
	if k < 2 {
		return nil, ErrTooFew
	}
	s := NewSeries(runs)
	total := s.Count()
	if total == 0 {
		return nil, ErrTooFew
	}
	df := float64(k - 1)
	t := StudentQuantile(1-(1-level)/2, df)
	est := s.Percentiles(qs)
	out := make([]Interval, len(qs))
	for i, q := range qs {
		p := q / 100
		y := s.countsAtOrBelow(est[i])
		var Y float64
		for _, v := range y {
			Y += float64(v)
		}
		F := Y / float64(total)
		var ss float64
		for c := range y {
			d := float64(y[c]) - F*float64(s.totals[c])
			ss += d * d
		}
		se := math.Sqrt(float64(k)/float64(k-1)*ss) / float64(total)
		iv := Interval{Estimate: est[i], Level: level, Method: Runs, N: k, DF: df}
		iv.Lo, iv.Hi = s.quantileAt(p-t*se, -1), s.quantileAt(p+t*se, 1)
		if float64(total)*(1-p) < MinTail {
			iv.Hi = math.Inf(1)
		}
		out[i] = iv
	}
	return out, nil
}

// RunsInterval is the interval of the (geometric, on a Relative scale)
// mean of per-run figures: Student's t with runs − 1 degrees of freedom.
func RunsInterval(values []float64, sc Scale, level float64) (Interval, error) {
	n := len(values)
	if n < 2 {
		return Interval{}, ErrTooFew
	}
	if err := checkScale(sc, values); err != nil {
		return Interval{}, err
	}
	tv := make([]float64, n)
	for i, v := range values {
		tv[i] = sc.transform(v)
	}
	m, sd := meanSD(tv)
	df := float64(n - 1)
	t := StudentQuantile(1-(1-level)/2, df)
	h := t * sd / math.Sqrt(float64(n))
	return Interval{Estimate: sc.back(m), Lo: sc.back(m - h), Hi: sc.back(m + h), Level: level, Method: Runs, N: n, DF: df}, nil
}
