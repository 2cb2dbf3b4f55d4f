// Package histo owns pacer's latency histograms: the concurrent recorder the
// connection readers write into, the snapshots taken from it for reports and
// intervals, percentile summaries, and the HdrHistogram V2 encoding that makes
// every result mergeable by any HdrHistogram implementation.
//
// Units are nanoseconds everywhere. A Recorder covers 1 ns to one hour with 3
// significant digits, the same geometry as hdrhistogram.New(1, Highest, 3), so
// a snapshot is a plain *hdrhistogram.Histogram and merges exactly with
// histograms from other runs or machines.
//
// Why not one hdrhistogram.Histogram per reader goroutine: each costs 270 KB
// at this range, three per connection, so -c 1000 would need 800 MB. A
// Recorder is one counts array shared by all readers and updated with atomic
// adds (lock-free, no allocation); memory depends on neither the run length
// nor the number of connections.
package histo

import (
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Geometry of every pacer histogram.
const (
	// Lowest is the lowest discernible value: 1 ns.
	Lowest int64 = 1
	// Highest is the highest trackable value: one hour. Larger values are
	// recorded as Highest and counted by Recorder.Clamped.
	Highest = int64(time.Hour)
	// SigFigs is the number of significant decimal digits kept.
	SigFigs = 3
)

// New returns an empty hdrhistogram.Histogram with pacer's geometry.
func New() *hdrhistogram.Histogram {
	return hdrhistogram.New(Lowest, Highest, SigFigs)
}

// Recorder is a histogram that many goroutines record into at once. Record
// is lock-free and allocation-free; Snapshot copies the counts into a new
// hdrhistogram.Histogram. A snapshot taken while values are being recorded
// holds every value recorded before the call started and possibly some
// recorded during it, so the difference of two successive snapshots counts
// every value exactly once (see Interval).
type Recorder struct {
	g       Geometry
	counts  []int64 // accessed only atomically
	clamped atomic.Int64
	below   atomic.Int64
}

// NewRecorder returns an empty Recorder with pacer's geometry (1 ns to one
// hour, 3 significant digits).
func NewRecorder() *Recorder { return NewRecorderGeometry(Lowest, Highest, SigFigs) }

// NewRecorderGeometry returns an empty Recorder with another geometry, for
// example redis-benchmark's (10 to 3,000,000 µs).
func NewRecorderGeometry(lowest, highest int64, sigFigs int) *Recorder {
	g := newGeometry(lowest, highest, sigFigs)
	return &Recorder{g: g, counts: make([]int64, g.countsLen)}
}

// Record adds one value in nanoseconds. Negative values (a clock step that
// cannot happen with the monotonic clock, or a caller bug) are recorded as 0
// and counted by Negative; values above Highest are recorded as Highest and
// counted by Clamped, so no sample is ever lost.
func (r *Recorder) Record(v int64) { r.RecordN(v, 1) }

// RecordN adds n occurrences of one value, with Record's rules.
func (r *Recorder) RecordN(v, n int64) {
	if v < 0 {
		r.below.Add(n)
		v = 0
	} else if v > r.g.highest {
		r.clamped.Add(n)
		v = r.g.highest
	}
	atomic.AddInt64(&r.counts[r.g.index(v)], n)
}

// Clamped is the number of values above Highest that were recorded as Highest.
func (r *Recorder) Clamped() int64 { return r.clamped.Load() }

// Negative is the number of negative values that were recorded as 0.
func (r *Recorder) Negative() int64 { return r.below.Load() }

// Snapshot returns a histogram holding everything recorded so far.
func (r *Recorder) Snapshot() *hdrhistogram.Histogram {
	counts := make([]int64, len(r.counts))
	for i := range r.counts {
		counts[i] = atomic.LoadInt64(&r.counts[i])
	}
	return r.g.histogram(counts)
}

// Interval returns what was recorded since prev, a snapshot taken earlier
// from the same Recorder (nil means since the start), and the new snapshot
// to pass as prev next time.
func (r *Recorder) Interval(prev *hdrhistogram.Histogram) (interval, now *hdrhistogram.Histogram) {
	now = r.Snapshot()
	if prev == nil {
		return now.Clone(), now
	}
	cur := now.Export().Counts
	old := prev.Export().Counts
	for i := range cur {
		if i < len(old) {
			cur[i] -= old[i]
		}
	}
	return r.g.histogram(cur), now
}

// Delta hands out what a Recorder recorded between successive calls of
// Next, for interval series: it keeps the counts of the last call (one
// array, no histogram), so the intervals' histograms add up exactly to the
// recorder's total.
type Delta struct {
	r          *Recorder
	prev, diff []int64 // diff: scratch, reused (Import copies it)
}

// NewDelta starts a Delta on r at its current counts.
func NewDelta(r *Recorder) *Delta {
	d := &Delta{r: r, prev: make([]int64, len(r.counts)), diff: make([]int64, len(r.counts))}
	for i := range r.counts {
		d.prev[i] = atomic.LoadInt64(&r.counts[i])
	}
	return d
}

// NewDeltaZero starts a Delta on r at zero counts: its first Take reads
// all r ever recorded (a recorder made after its series began).
func NewDeltaZero(r *Recorder) *Delta {
	return &Delta{r: r, prev: make([]int64, len(r.counts)), diff: make([]int64, len(r.counts))}
}

// Next returns a histogram of what was recorded since the last call (or
// NewDelta): Take, then Histogram.
func (d *Delta) Next() *hdrhistogram.Histogram {
	d.Take()
	return d.Histogram()
}

// Take reads what was recorded since the last Take (or NewDelta), for
// Histogram to build. It is quick and allocates nothing, so a series takes
// all its recorders at one instant and encodes them afterwards.
func (d *Delta) Take() {
	for i := range d.r.counts {
		cur := atomic.LoadInt64(&d.r.counts[i])
		d.diff[i] = cur - d.prev[i]
		d.prev[i] = cur
	}
}

// Histogram returns a histogram of what the last Take read.
func (d *Delta) Histogram() *hdrhistogram.Histogram { return d.r.g.histogram(d.diff) }
