package timeline

import (
	"math"
	"math/bits"
)

// Timeline gives the planned send instant of every request as an offset from
// the start of the run:
//
//	intended(i) = t0 + Offset(i)
//
// Offsets are computed from the request index, never accumulated from a
// running clock, so a generator that falls behind sends its backlog with the
// original intended times and the timeline never shifts. Offsets are
// non-decreasing in i.
type Timeline interface {
	// Offset returns the offset of request i in nanoseconds.
	Offset(i uint64) int64
	// Name describes the arrival process ("uniform", "poisson").
	Name() string
}

var (
	_ Timeline = Uniform{}
	_ Timeline = (*Poisson)(nil)
	_ counter  = Uniform{}
	_ counter  = (*Poisson)(nil)
)

// forker is a Timeline that keeps state between calls (a cursor): fork
// returns an independent one with the same offsets, for a goroutine other
// than the pacer's (live totals).
type forker interface{ fork() Timeline }

// Fork returns tl itself when it keeps no state, else a fork.
func Fork(tl Timeline) Timeline {
	if f, ok := tl.(forker); ok {
		return f.fork()
	}
	return tl
}

// Close releases what a fork of a timeline holds (a trace's
// reader).
func Close(tl Timeline) {
	if c, ok := tl.(interface{ Close() }); ok {
		c.Close()
	}
}

// counter is a Timeline that counts its requests before an offset without
// walking them: in O(1) (Uniform) or in bounded time (Poisson), whatever
// the rate and the length.
type counter interface {
	// countBefore returns how many requests have an offset below end,
	// at most limit.
	countBefore(end int64, limit uint64) uint64
}

// Uniform sends at a fixed rate: Offset(i) = i / rate, in exact integer math.
type Uniform struct{ Rate Rate }

// Offset implements Timeline.
func (u Uniform) Offset(i uint64) int64 {
	if u.Rate.milli == 0 {
		return math.MaxInt64
	}
	// i * 1e12 / milli with a 128-bit intermediate: exact, no overflow.
	hi, lo := bits.Mul64(i, 1e12)
	if hi >= u.Rate.milli {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, u.Rate.milli)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Name implements Timeline.
func (Uniform) Name() string { return "uniform" }

// countBefore implements counter in O(1): the requests with
// floor(i·1e12/milli) < end are those with i·1e12 < end·milli, so the count
// is ⌈end·milli/1e12⌉, in 128-bit integer math; evaluating Offset on both
// sides of that boundary then makes it exact by construction.
func (u Uniform) countBefore(end int64, limit uint64) uint64 {
	if u.Rate.milli == 0 || end <= 0 || limit == 0 {
		return 0
	}
	// end < 2^63 and milli ≤ 2^40, so hi < 2^39 < 1e12: Div64 cannot
	// overflow.
	hi, lo := bits.Mul64(uint64(end), u.Rate.milli)
	q, r := bits.Div64(hi, lo, 1e12)
	if r != 0 {
		q++
	}
	for q > 0 && u.Offset(q-1) >= end {
		q--
	}
	for q < limit && u.Offset(q) < end {
		q++
	}
	return min(q, limit)
}

// Count returns how many requests of tl fall before end (offset < end),
// stopping at limit. For Uniform and Poisson it takes bounded time whatever
// the rate and end; other timelines are walked.
func Count(tl Timeline, end int64, limit uint64) uint64 { return CountFrom(tl, 0, end, limit) }

// CountFrom is Count for a timeline known to have at least from requests
// before end.
func CountFrom(tl Timeline, from uint64, end int64, limit uint64) uint64 {
	if c, ok := tl.(counter); ok {
		return max(from, c.countBefore(end, limit))
	}
	n := from
	for n < limit && tl.Offset(n) < end {
		n++
	}
	return n
}
