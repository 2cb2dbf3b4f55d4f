package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Hist is one interval's histogram as the bootstrap reads it: the values
// a percentile reports for its buckets, ascending, and their counts.
// HistOf converts an HdrHistogram.
type Hist struct {
	Values []int64
	Counts []int64
}

// HistMemo keeps the Hists made from histograms a caller would decode
// again and again (a run's intervals, at each of its looks), under a
// comparable key of the caller's that names the histogram's encoding
// (histo.Key). A nil memo keeps nothing. Not safe for concurrent use.
type HistMemo struct{ m map[any]Hist }

// Get returns the Hist kept under key, or makes one with mk and keeps it.
func (m *HistMemo) Get(key any, mk func() (Hist, error)) (Hist, error) {
	if m == nil {
		return mk()
	}
	if h, ok := m.m[key]; ok {
		return h, nil
	}
	h, err := mk()
	if err != nil {
		return Hist{}, err
	}
	if m.m == nil {
		m.m = map[any]Hist{}
	}
	m.m[key] = h
	return h, nil
}

// Len is the number of Hists kept.
func (m *HistMemo) Len() int {
	if m == nil {
		return 0
	}
	return len(m.m)
}

// Series is a run as a sequence of intervals, each a histogram (and, for
// ratios, a numerator and a denominator: completed requests and seconds,
// errors and scheduled requests). Resampling it in blocks of consecutive
// intervals keeps what clusters in time (a stall, a noisy second)
// together, as it happened.
type Series struct {
	values []int64   // every bucket value of every interval, ascending
	blocks [][]entry // each interval's buckets, as indexes into values
	totals []int64
}

type entry struct {
	at    int32
	count int64
}

// NewSeries builds a series from the histograms of a run's intervals, in
// time order. Empty intervals are kept: they are time the run spent.
func NewSeries(hs []Hist) *Series {
	s := &Series{blocks: make([][]entry, len(hs)), totals: make([]int64, len(hs))}
	for _, h := range hs {
		s.values = append(s.values, h.Values...)
	}
	slices.Sort(s.values)
	s.values = slices.Compact(s.values)
	for i, h := range hs {
		b := make([]entry, 0, len(h.Values))
		for j, v := range h.Values {
			if h.Counts[j] <= 0 {
				continue
			}
			k, _ := slices.BinarySearch(s.values, v)
			b = append(b, entry{at: int32(k), count: h.Counts[j]})
			s.totals[i] += h.Counts[j]
		}
		s.blocks[i] = b
	}
	return s
}

// Len is the number of intervals.
func (s *Series) Len() int { return len(s.blocks) }

// Count is the number of values in all intervals.
func (s *Series) Count() int64 {
	var n int64
	for _, t := range s.totals {
		n += t
	}
	return n
}

// percentiles computes the percentiles qs (in percent, as HdrHistogram
// takes them) of the intervals idx taken together, into out, with dense
// as scratch (len(s.values)). A percentile follows HdrHistogram's
// ValueAtQuantile: the value of the first bucket whose cumulative count
// reaches ⌊q/100·n + 0.5⌋ (at least 1). It returns false when the
// intervals hold no value.
func (s *Series) percentiles(idx []int, qs []float64, dense []int64, out []float64) bool {
	clear(dense)
	var n int64
	for _, i := range idx {
		for _, e := range s.blocks[i] {
			dense[e.at] += e.count
		}
		n += s.totals[i]
	}
	if n == 0 {
		return false
	}
	// qs are ascending in practice, but any order works: each is found
	// from the start of the scan it shares with the ones before it.
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpFloat(qs[a], qs[b]) })
	var cum int64
	k := 0
	for _, oi := range order {
		target := rank(qs[oi], n)
		for k < len(dense) && cum+dense[k] < target {
			cum += dense[k]
			k++
		}
		if k >= len(dense) {
			k = len(dense) - 1
		}
		out[oi] = float64(s.values[k])
	}
	return true
}

// rank is the 1-based rank HdrHistogram's ValueAtQuantile reads for
// percentile q of n values: ⌊q/100·n + 0.5⌋, within [1, n].
func rank(q float64, n int64) int64 {
	r := min(q, 100)/100*float64(n) + 0.5
	switch {
	case !(r >= 1):
		return 1
	case r >= float64(n):
		return n
	}
	return int64(r)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Percentiles returns the percentiles qs of the whole series.
func (s *Series) Percentiles(qs []float64) []float64 {
	out := make([]float64, len(qs))
	idx := make([]int, s.Len())
	for i := range idx {
		idx[i] = i
	}
	s.percentiles(idx, qs, make([]int64, len(s.values)), out)
	return out
}

// BlockLength is the block length the bootstrap uses for n intervals:
// ⌈n^(1/3)⌉, the order that balances the bias of cutting dependence at
// block edges against the variance of few blocks (Hall, Horowitz and
// Jing), at least 1.
func BlockLength(n int) int {
	if n <= 1 {
		return 1
	}
	return max(1, int(math.Ceil(math.Cbrt(float64(n)))))
}

// resampler draws circular block bootstrap resamples of n intervals:
// ⌈n/l⌉ blocks of l consecutive intervals, each starting anywhere (the
// series wrapping around), cut to n intervals.
type resampler struct {
	n, l int
	rng  *rand.Rand
	idx  []int
}

func newResampler(n, l int, seed uint64) *resampler {
	return &resampler{n: n, l: min(max(l, 1), max(n, 1)), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), idx: make([]int, 0, n)}
}

// next returns the next resample's interval indexes (valid until the next
// call).
func (r *resampler) next() []int {
	r.idx = r.idx[:0]
	for len(r.idx) < r.n {
		start := r.rng.IntN(r.n)
		for j := 0; j < r.l && len(r.idx) < r.n; j++ {
			r.idx = append(r.idx, (start+j)%r.n)
		}
	}
	return r.idx
}

// countsAtOrBelow returns, for each interval, how many of its values
// are at or below x.
func (s *Series) countsAtOrBelow(x float64) []int64 {
	out := make([]int64, len(s.blocks))
	for i, b := range s.blocks {
		for _, e := range b {
			if float64(s.values[e.at]) > x {
				break
			}
			out[i] += e.count
		}
	}
	return out
}
