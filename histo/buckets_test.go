package histo

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

func TestLowestEquivalentMatchesLibrary(t *testing.T) {
	t.Parallel()
	testrun.SkipRace(t, "one goroutine's arithmetic, which the detector only slows (5 s)")
	rng := rand.New(rand.NewPCG(5, 6))
	r := NewRecorder()
	h := New()
	for range 300 {
		v := int64(math.Exp(rng.Float64() * math.Log(float64(Highest))))
		h.Reset()
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		// The library's Min is the lowest value of the slot holding its
		// one value.
		if got, want := r.LowestEquivalent(v), h.Min(); got != want {
			t.Errorf("LowestEquivalent(%d) = %d, library's slot starts at %d", v, got, want)
		}
	}
}

// TestCumulativeCountsBelowSlotStarts checks Cumulative against the values
// themselves, at bounds that start a slot (exact) — 10 µs × 2^k, the
// Prometheus buckets — and at the slot starts around them.
func TestCumulativeCountsBelowSlotStarts(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	rng := rand.New(rand.NewPCG(7, 8))
	var values []int64
	for range 50000 {
		v := int64(math.Exp(rng.Float64()*18) * 100) // 100 ns to ~6.5 s, log-uniform
		values = append(values, v)
		r.Record(v)
	}
	// Values exactly at a bound and one below it, the edge cases.
	var bounds []int64
	for k := range 21 {
		b := int64(10_000) << k
		if r.LowestEquivalent(b) != b {
			t.Fatalf("10 µs × 2^%d = %d ns does not start a slot", k, b)
		}
		bounds = append(bounds, b)
		values = append(values, b, b-1)
		r.Record(b)
		r.Record(b - 1)
	}
	below := make([]uint64, len(bounds))
	count, sum := r.Cumulative(bounds, below)
	if count != uint64(len(values)) {
		t.Fatalf("count %d, want %d", count, len(values))
	}
	var trueSum float64
	for _, v := range values {
		trueSum += float64(v)
	}
	if math.Abs(sum-trueSum)/trueSum > 1e-3 {
		t.Errorf("sum %.0f, true sum %.0f: off by more than 0.1%%", sum, trueSum)
	}
	for i, b := range bounds {
		var want uint64
		for _, v := range values {
			if v < b {
				want++
			}
		}
		if below[i] != want {
			t.Errorf("below %d ns: %d, want %d", b, below[i], want)
		}
	}
	// An empty recorder, and bounds beyond every value.
	empty := make([]uint64, 2)
	if n, s := NewRecorder().Cumulative([]int64{1, 2}, empty); n != 0 || s != 0 || empty[0] != 0 || empty[1] != 0 {
		t.Errorf("empty recorder: count %d sum %v below %v", n, s, empty)
	}
	top := make([]uint64, 1)
	r.Cumulative([]int64{Highest}, top)
	if top[0] != count {
		t.Errorf("below one hour: %d, want all %d", top[0], count)
	}
}
