package histo

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Summary is the fixed set of statistics pacer reports for a histogram, in
// milliseconds. Percentiles are HdrHistogram's: the highest value equivalent
// (within 3 significant digits) to the recorded value at that rank.
type Summary struct {
	Count int64   `json:"-"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
	Max   float64 `json:"max"`
}

// Metric returns a Summary field by its JSON name (min, mean, p50, p90,
// p95, p99, p99.9, p99.99, max).
func (s Summary) Metric(name string) (float64, bool) {
	if f := s.Field(name); f != nil {
		return *f, true
	}
	return 0, false
}

// Field returns the address of the field of s a JSON name (see Metric)
// names, so it can be set; nil for any other name.
func (s *Summary) Field(name string) *float64 {
	switch name {
	case "min":
		return &s.Min
	case "mean":
		return &s.Mean
	case "p50":
		return &s.P50
	case "p90":
		return &s.P90
	case "p95":
		return &s.P95
	case "p99":
		return &s.P99
	case "p99.9":
		return &s.P999
	case "p99.99":
		return &s.P9999
	case "max":
		return &s.Max
	}
	return nil
}

// Percentiles are the ranks a Summary reports, in percent.
var Percentiles = []float64{50, 90, 95, 99, 99.9, 99.99}

// Summarize computes the Summary of h. An empty histogram gives all zeros.
func Summarize(h *hdrhistogram.Histogram) Summary {
	if h == nil || h.TotalCount() == 0 {
		return Summary{}
	}
	p := h.ValueAtPercentiles(Percentiles)
	return Summary{
		Count: h.TotalCount(),
		Min:   Millis(h.Min()),
		Mean:  math.Round(h.Mean()) / 1e6, // whole nanoseconds
		P50:   Millis(p[50]),
		P90:   Millis(p[90]),
		P95:   Millis(p[95]),
		P99:   Millis(p[99]),
		P999:  Millis(p[99.9]),
		P9999: Millis(p[99.99]),
		Max:   Millis(h.Max()),
	}
}

// Millis converts nanoseconds to milliseconds.
func Millis(ns int64) float64 { return float64(ns) / 1e6 }

// summarizeCounts is Summarize of a histogram with geometry g and counts,
// without building it: the library's arithmetic step for step (its Min,
// Max, Mean and ValueAtPercentiles walk the counts in index order), so the
// result is Summarize's to the last bit (TestSummarizeCountsIsSummarize).
func summarizeCounts(g Geometry, counts []int64) Summary {
	var total int64
	first, last := -1, -1
	for i, c := range counts {
		if c != 0 {
			if first < 0 {
				first = i
			}
			last = i
			total += c
		}
	}
	if total == 0 {
		return Summary{}
	}
	var mean float64
	fTotal := float64(total)
	for i := first; i <= last; i++ {
		if c := counts[i]; c != 0 {
			// g.medianEquivalent(g.valueAt(i)), from the slot's bucket
			// without finding it again from the value.
			b := max(i>>g.subHalfMagnitude-1, 0)
			median := g.valueAt(i) + int64(1)<<(uint(b)+g.unitMagnitude)>>1
			mean += float64(c) * float64(median) / fTotal
		}
	}
	var p [len(summaryPercentiles)]int64
	k, next := 0, percentileRank(summaryPercentiles[0], total)
	var cum int64
	for i := first; i <= last && k < len(p); i++ {
		cum += counts[i]
		for cum >= next {
			p[k] = g.highestEquivalent(g.valueAt(i))
			if k++; k == len(p) {
				break
			}
			next = percentileRank(summaryPercentiles[k], total)
		}
	}
	return Summary{
		Count: total,
		Min:   Millis(g.lowestEquivalent(g.highestEquivalent(g.valueAt(first)))),
		Mean:  math.Round(mean) / 1e6,
		P50:   Millis(p[0]),
		P90:   Millis(p[1]),
		P95:   Millis(p[2]),
		P99:   Millis(p[3]),
		P999:  Millis(p[4]),
		P9999: Millis(p[5]),
		Max:   Millis(g.highestEquivalent(g.highestEquivalent(g.valueAt(last)))),
	}
}

// summaryPercentiles are the percentiles of a Summary's fields, in order.
var summaryPercentiles = [...]float64{50, 90, 95, 99, 99.9, 99.99}

// percentileRank is the library's: the count at or past which a
// percentile's value lies, in [1, total].
func percentileRank(p float64, total int64) int64 {
	rank := min(p, 100)/100*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// Add adds from to into and returns the sum: into itself when it is not
// nil, otherwise a copy of from, so a sum never shares a histogram it was
// given. Nil stands for an absent histogram: Add(nil, nil) is nil. It also
// returns the values of from that did not fit into's range (none when both
// have pacer's geometry, or into was nil). Every merge of histograms in
// pacer goes through it.
func Add(into, from *hdrhistogram.Histogram) (*hdrhistogram.Histogram, int64) {
	switch {
	case from == nil:
		return into, 0
	case into == nil:
		return hdrhistogram.Import(from.Export()), 0
	}
	return into, into.Merge(from)
}

// Copy returns a histogram of its own with h's values (nil for nil).
func Copy(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	c, _ := Add(nil, h)
	return c
}

// Merge adds every histogram in hs into a new histogram with pacer's
// geometry and returns it with the number of values that did not fit (zero
// unless an input has a wider range than pacer's).
func Merge(hs ...*hdrhistogram.Histogram) (*hdrhistogram.Histogram, int64) {
	out := New()
	var dropped int64
	for _, h := range hs {
		var d int64
		out, d = Add(out, h)
		dropped += d
	}
	return out, dropped
}
