package histo

import "sync/atomic"

// LowestEquivalent is the lowest value of the slot that v falls in: values
// from it up to the next slot's start are counted as one.
func (r *Recorder) LowestEquivalent(v int64) int64 {
	v = min(max(v, 0), r.g.highest)
	return r.g.lowestEquivalent(v)
}

// Cumulative reads the counts recorded so far, without copying them and
// without allocating, for exporters that bucket the values (Prometheus
// histograms). For each bound (nanoseconds, ascending) below[i] is set to the
// number of values below bounds[i]; the total count and the sum of the
// values are returned, each value taken at its slot's median (as
// HdrHistogram's mean is). below must be as long as bounds.
//
// The counts are exact when every bound is the start of a slot
// (LowestEquivalent(b) == b): then no slot straddles a bound. A value of
// exactly b counts above it, with the rest of its slot.
//
// The counts are read one slot at a time while readers may still record:
// the result holds everything recorded before the call and possibly some
// of what was recorded during it, and count is always the total of the
// slots read, so below, count and sum agree with each other and never go
// down from one call to the next.
func (r *Recorder) Cumulative(bounds []int64, below []uint64) (count uint64, sum float64) {
	k := 0
	var cum uint64
	for i := range r.counts {
		c := atomic.LoadInt64(&r.counts[i])
		if c == 0 {
			continue
		}
		v := r.g.valueAt(i)
		for k < len(bounds) && v >= bounds[k] {
			below[k] = cum
			k++
		}
		cum += uint64(c)
		sum += float64(c) * float64(r.g.medianEquivalent(v))
	}
	for ; k < len(bounds); k++ {
		below[k] = cum
	}
	return cum, sum
}
