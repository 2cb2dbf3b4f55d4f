package histo

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// This file walks histograms exactly as the HdrHistogram C library's
// iterators do, because redis-benchmark prints its reports with them and
// pacer bench must print the same lines for the same counts. The Go
// library's iterators differ in small ways (rounding of ranks, the value
// reported per step).

// Step is one line of a redis-benchmark distribution: the percentile (of
// the iteration, or of the cumulative count for linear steps), the highest
// value equivalent to the bucket reached, and the cumulative count there.
type Step struct {
	Percentile float64
	Value      int64
	Cumulative int64
}

// citer mirrors struct hdr_iter's basic state.
type citer struct {
	g         Geometry
	counts    []int64
	total     int64
	idx       int
	count     int64
	cum       int64
	value     int64
	highestEq int64
}

func newCIter(h *hdrhistogram.Histogram) *citer {
	it := &citer{g: geometryOf(h), counts: h.Export().Counts, idx: -1}
	for _, c := range it.counts {
		it.total += c
	}
	return it
}

func (it *citer) hasNext() bool { return it.cum < it.total }

func (it *citer) moveNext() bool {
	it.idx++
	if it.idx >= len(it.counts) {
		return false
	}
	it.count = it.counts[it.idx]
	it.cum += it.count
	it.value = it.g.valueAt(it.idx)
	it.highestEq = it.g.lowestEquivalent(it.value) + it.g.rangeSize(it.value) - 1
	return true
}

func (it *citer) basicNext() bool {
	if !it.hasNext() || it.idx >= len(it.counts) {
		return false
	}
	it.moveNext()
	return true
}

// PercentileSteps returns the lines of redis-benchmark's "Latency by
// percentile distribution" (hdr_iter_percentile with ticksPerHalfDistance,
// keeping a step when the cumulative count changed or reached the total).
func PercentileSteps(h *hdrhistogram.Histogram, ticksPerHalfDistance int) []Step {
	it := newCIter(h)
	if it.total == 0 {
		return nil
	}
	var (
		toIterate, percentile float64
		seenLast              bool
	)
	next := func() bool {
		if !it.hasNext() {
			if seenLast {
				return false
			}
			seenLast, percentile = true, 100
			return true
		}
		if it.idx == -1 && !it.basicNext() {
			return false
		}
		for {
			current := 100 * float64(it.cum) / float64(it.total)
			if it.count != 0 && toIterate <= current {
				percentile = toIterate
				if toIterate < 100 {
					temp := int64(math.Log(100/(100-toIterate))/math.Log(2)) + 1
					half := int64(math.Pow(2, float64(temp)))
					toIterate += 100 / float64(int64(ticksPerHalfDistance)*half)
				}
				return true
			}
			if !it.basicNext() {
				return true
			}
		}
	}
	var out []Step
	prev := int64(-1)
	for next() {
		if prev != it.cum || it.cum == it.total {
			out = append(out, Step{Percentile: percentile, Value: it.highestEq, Cumulative: it.cum})
		}
		prev = it.cum
	}
	return out
}

// LinearSteps returns the lines of redis-benchmark's "Cumulative
// distribution of latencies": hdr_iter_linear with unitsPerBucket, which
// becomes switchUnits once a step's value exceeds switchAbove.
func LinearSteps(h *hdrhistogram.Histogram, unitsPerBucket, switchAbove, switchUnits int64) []Step {
	it := newCIter(h)
	if it.total == 0 {
		return nil
	}
	units := unitsPerBucket
	level := units
	levelLEQ := it.g.lowestEquivalent(level)
	nextAbove := func(bound int64) bool {
		if it.idx >= len(it.counts) {
			return false
		}
		return it.g.valueAt(it.idx+1) > bound
	}
	next := func() bool {
		if !it.hasNext() && !nextAbove(levelLEQ) {
			return false
		}
		for {
			if it.value >= levelLEQ {
				level += units
				levelLEQ = it.g.lowestEquivalent(level)
				return true
			}
			if !it.moveNext() {
				return true
			}
		}
	}
	var out []Step
	prev := int64(-1)
	for next() {
		if prev != it.cum || it.cum == it.total {
			out = append(out, Step{
				Percentile: float64(it.cum) / float64(it.total) * 100,
				Value:      it.highestEq,
				Cumulative: it.cum,
			})
		}
		if it.highestEq > switchAbove {
			units = switchUnits
		}
		prev = it.cum
	}
	return out
}

// CValueAtPercentile is hdr_value_at_percentile: the highest equivalent
// value of the first bucket whose cumulative count reaches
// round(p% × total), at least 1.
func CValueAtPercentile(h *hdrhistogram.Histogram, p float64) int64 {
	it := newCIter(h)
	if it.total == 0 {
		return 0
	}
	rank := int64(min(p, 100)/100*float64(it.total) + 0.5)
	rank = max(rank, 1)
	var cum int64
	for i, c := range it.counts {
		cum += c
		if cum >= rank {
			v := it.g.valueAt(i)
			if p == 0 {
				return it.g.lowestEquivalent(v)
			}
			return it.g.highestEquivalent(v)
		}
	}
	return 0
}

// CMean is hdr_mean: the count-weighted median equivalent values, summed
// as integers.
func CMean(h *hdrhistogram.Histogram) float64 {
	it := newCIter(h)
	if it.total == 0 {
		return math.NaN()
	}
	var sum int64
	for i, c := range it.counts {
		if c != 0 {
			sum += c * it.g.medianEquivalent(it.g.valueAt(i))
		}
	}
	return float64(sum) / float64(it.total)
}

// CMin is hdr_min: the lowest equivalent value of the lowest bucket used.
func CMin(h *hdrhistogram.Histogram) int64 {
	it := newCIter(h)
	for i, c := range it.counts {
		if c != 0 {
			return it.g.lowestEquivalent(it.g.valueAt(i))
		}
	}
	return math.MaxInt64 // hdr_min of an empty histogram
}

// CMax is hdr_max: the highest equivalent value of the highest bucket used.
func CMax(h *hdrhistogram.Histogram) int64 {
	it := newCIter(h)
	for i := len(it.counts) - 1; i >= 0; i-- {
		if it.counts[i] != 0 {
			return it.g.highestEquivalent(it.g.valueAt(i))
		}
	}
	return 0
}
