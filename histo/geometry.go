package histo

import (
	"math"
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Geometry is the bucket layout of an HdrHistogram: which slot of the
// counts array each value lands in. It reproduces the layout shared by the
// Java, C and Go implementations (checked against hdrhistogram-go by
// TestIndexMatchesLibrary), so counts can be handed to hdrhistogram.Import
// and the report functions below can walk them as the C library does.
type Geometry struct {
	lowest, highest  int64
	sigFigs          int
	unitMagnitude    uint
	subHalfMagnitude uint // log2 of half the sub-bucket count
	subHalfCount     int32
	subCount         int32
	subMask          int64
	countsLen        int
}

// newGeometry computes the layout for the given range and precision
// (significant digits clamped to 1..5, lowest to at least 1).
func newGeometry(lowest, highest int64, sigFigs int) Geometry {
	sigFigs = min(max(sigFigs, 1), 5)
	lowest = max(lowest, 1)
	subCountMagnitude := int(math.Ceil(math.Log2(2 * math.Pow10(sigFigs))))
	g := Geometry{lowest: lowest, highest: highest, sigFigs: sigFigs}
	g.subHalfMagnitude = uint(max(subCountMagnitude, 1) - 1)
	g.unitMagnitude = uint(max(math.Floor(math.Log2(float64(lowest))), 0))
	g.subCount = 1 << (g.subHalfMagnitude + 1)
	g.subHalfCount = g.subCount / 2
	g.subMask = int64(g.subCount-1) << g.unitMagnitude
	smallestUntrackable := int64(g.subCount) << g.unitMagnitude
	buckets := 1
	for smallestUntrackable <= highest {
		if smallestUntrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		smallestUntrackable <<= 1
		buckets++
	}
	g.countsLen = (buckets + 1) * int(g.subHalfCount)
	return g
}

// geometryOf returns the layout of an existing histogram.
func geometryOf(h *hdrhistogram.Histogram) Geometry {
	return newGeometry(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
}

func (g Geometry) bucketIndex(v int64) int {
	return 64 - bits.LeadingZeros64(uint64(v|g.subMask)) - int(g.unitMagnitude) - int(g.subHalfMagnitude+1)
}

// index maps a value in [0, highest] to its slot in the counts array.
func (g Geometry) index(v int64) int {
	b := g.bucketIndex(v)
	sub := int(v >> (uint(b) + g.unitMagnitude))
	return (b+1)<<g.subHalfMagnitude + sub - int(g.subHalfCount)
}

// valueAt is the lowest value of slot i.
func (g Geometry) valueAt(i int) int64 {
	b := (i >> g.subHalfMagnitude) - 1
	sub := int64(i&int(g.subHalfCount-1)) + int64(g.subHalfCount)
	if b < 0 {
		sub -= int64(g.subHalfCount)
		b = 0
	}
	return sub << (uint(b) + g.unitMagnitude)
}

func (g Geometry) rangeSize(v int64) int64 {
	b := g.bucketIndex(v)
	sub := v >> (uint(b) + g.unitMagnitude)
	if sub >= int64(g.subCount) {
		b++
	}
	return 1 << (g.unitMagnitude + uint(b))
}

func (g Geometry) lowestEquivalent(v int64) int64 {
	b := g.bucketIndex(v)
	sub := v >> (uint(b) + g.unitMagnitude)
	return sub << (uint(b) + g.unitMagnitude)
}

func (g Geometry) highestEquivalent(v int64) int64 {
	return g.lowestEquivalent(v) + g.rangeSize(v) - 1
}

func (g Geometry) medianEquivalent(v int64) int64 {
	return g.lowestEquivalent(v) + g.rangeSize(v)>>1
}

func (g Geometry) histogram(counts []int64) *hdrhistogram.Histogram {
	return hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  g.lowest,
		HighestTrackableValue: g.highest,
		SignificantFigures:    int64(g.sigFigs),
		Counts:                counts,
	})
}
