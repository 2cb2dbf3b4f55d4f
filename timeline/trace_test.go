package timeline

import (
	"errors"
	"math"
	"testing"
)

// sliceOffsets is a trace held in memory, counting how often it was
// opened.
type sliceOffsets struct {
	offs []int64
	i    int
	err  error
}

func (s *sliceOffsets) Next() (int64, bool) {
	if s.i >= len(s.offs) {
		return 0, false
	}
	s.i++
	return s.offs[s.i-1], true
}
func (s *sliceOffsets) Err() error   { return s.err }
func (s *sliceOffsets) Close() error { return nil }

func traceOf(offs []int64, n uint64, opens *int) *Trace {
	return NewTrace(func() (TraceOffsets, error) {
		*opens++
		return &sliceOffsets{offs: offs}, nil
	}, n)
}

func TestTraceTimeline(t *testing.T) {
	offs := make([]int64, 1000)
	for i := range offs {
		offs[i] = int64(i/3) * 1000 // three requests at each instant
	}
	opens := 0
	tl := traceOf(offs, 0, &opens)
	for i := range offs { // the pacer's walk: forward
		if got := tl.Offset(uint64(i)); got != offs[i] {
			t.Fatalf("Offset(%d) = %d, want %d", i, got, offs[i])
		}
	}
	if tl.Offset(1000) != math.MaxInt64 || opens != 1 {
		t.Fatalf("past the end: %d; opened %d times", tl.Offset(1000), opens)
	}
	if tl.Offset(990) != offs[990] || opens != 1 {
		t.Fatalf("a look back within the recent offsets reopened the trace")
	}
	if tl.Offset(5) != offs[5] || opens != 2 {
		t.Fatalf("a look far back: opened %d times", opens)
	}
	// Counting: exact, against a walk of the slice.
	for _, c := range []struct {
		end   int64
		limit uint64
	}{{0, 1000}, {1, 1000}, {1000, 1000}, {1001, 1000}, {150_000, 1000}, {150_000, 10}, {1 << 40, 1000}, {332_000, 2000}} {
		want := uint64(0)
		for want < c.limit && want < uint64(len(offs)) && offs[want] < c.end {
			want++
		}
		if got := CountFrom(tl, 0, c.end, c.limit); got != want {
			t.Errorf("count before %d (limit %d) = %d, want %d", c.end, c.limit, got, want)
		}
	}
	// A bound of n requests ends it there; a fork walks on its own.
	short := traceOf(offs, 10, &opens)
	if short.Offset(9) != offs[9] || short.Offset(10) != math.MaxInt64 {
		t.Fatalf("n = 10: Offset(9) %d, Offset(10) %d", short.Offset(9), short.Offset(10))
	}
	f := Fork(tl).(*Trace)
	if f.Offset(500) != offs[500] || tl.next == f.next {
		t.Fatal("fork shares the cursor")
	}
	// A read error ends the timeline and is kept.
	bad := NewTrace(func() (TraceOffsets, error) {
		return &sliceOffsets{offs: offs[:3], err: errors.New("disk on fire")}, nil
	}, 0)
	if bad.Offset(3) != math.MaxInt64 || bad.Err() == nil {
		t.Fatalf("error: %v", bad.Err())
	}
}
