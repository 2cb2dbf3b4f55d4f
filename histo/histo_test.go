package histo

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/internal/testrun"
)

// libraryIndex finds where hdrhistogram-go itself puts v, recording it
// alone in h.
func libraryIndex(t *testing.T, h *hdrhistogram.Histogram, v int64) int {
	t.Helper()
	h.Reset()
	if err := h.RecordValue(v); err != nil {
		t.Fatalf("library rejects %d: %v", v, err)
	}
	for i, c := range h.Export().Counts {
		if c != 0 {
			return i
		}
	}
	t.Fatalf("library recorded %d nowhere", v)
	return -1
}

func TestIndexMatchesLibrary(t *testing.T) {
	t.Parallel()
	testrun.SkipRace(t, "one goroutine's arithmetic, which the detector only slows (9 s)")
	values := []int64{0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1e6, 1e9, Highest - 1, Highest}
	for shift := 0; shift < 42; shift++ {
		base := int64(1) << shift
		values = append(values, base-1, base, base+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, rng.Int64N(Highest+1))
	}
	lib := New() // one histogram, reset for each value
	for _, v := range values {
		if v < 0 || v > Highest {
			continue
		}
		if got, want := newGeometry(Lowest, Highest, SigFigs).index(v), libraryIndex(t, lib, v); got != want {
			t.Errorf("index(%d) = %d, library uses %d", v, got, want)
		}
	}
}

func TestSnapshotEqualsLibraryHistogram(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	want := New()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		v := int64(rng.ExpFloat64() * 1e6)
		r.Record(v)
		if err := want.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	got := r.Snapshot()
	if !got.Equals(want) {
		t.Fatalf("snapshot differs from the library histogram: count %d vs %d, p99 %d vs %d",
			got.TotalCount(), want.TotalCount(), got.ValueAtQuantile(99), want.ValueAtQuantile(99))
	}
}

func TestRecordOutOfRange(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	r.Record(-5)
	r.Record(Highest * 3)
	h := r.Snapshot()
	if h.TotalCount() != 2 || r.Clamped() != 1 || r.Negative() != 1 {
		t.Fatalf("total %d clamped %d negative %d, want 2 1 1", h.TotalCount(), r.Clamped(), r.Negative())
	}
	if !h.ValuesAreEquivalent(h.Max(), Highest) {
		t.Fatalf("max %d, want ~%d", h.Max(), Highest)
	}
}

func TestConcurrentRecordLosesNothing(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	var wg sync.WaitGroup
	const writers, each = 8, 5000
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r.Record(int64(i*w + 1))
			}
		}()
	}
	wg.Wait()
	if got := r.Snapshot().TotalCount(); got != writers*each {
		t.Fatalf("total %d, want %d", got, writers*each)
	}
}

func TestIntervalsAddUpToTotal(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	var prev = r.Snapshot()
	var sum int64
	for round := 1; round <= 4; round++ {
		for i := range round * 100 {
			r.Record(int64(i * 1000))
		}
		var iv = prev
		iv, prev = r.Interval(prev)
		if iv.TotalCount() != int64(round*100) {
			t.Fatalf("round %d: interval holds %d, want %d", round, iv.TotalCount(), round*100)
		}
		sum += iv.TotalCount()
	}
	if sum != r.Snapshot().TotalCount() {
		t.Fatalf("intervals sum to %d, total is %d", sum, r.Snapshot().TotalCount())
	}
}

// microseconds is a histogram of 1..n µs, one value each: its
// percentiles are known.
func microseconds(t *testing.T, n int64) *hdrhistogram.Histogram {
	t.Helper()
	h := New()
	for v := int64(1); v <= n; v++ {
		if err := h.RecordValue(v * 1000); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	s := Summarize(microseconds(t, 10000))
	tests := []struct {
		name      string
		got, want float64
	}{
		{"min", s.Min, 0.001},
		{"p50", s.P50, 5.0},
		{"p90", s.P90, 9.0},
		{"p99", s.P99, 9.9},
		{"p99.9", s.P999, 9.99},
		{"max", s.Max, 10.0},
		{"mean", s.Mean, 5.0005},
	}
	for _, tc := range tests {
		// 3 significant digits: within 0.1%.
		if d := tc.got - tc.want; d > tc.want*0.001 || d < -tc.want*0.001 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if (Summarize(New()) != Summary{}) {
		t.Errorf("empty histogram should summarize to zeros")
	}
}

// TestSummaryField: each JSON name of a Summary field names that field,
// to Field and to Metric; another name names none.
func TestSummaryField(t *testing.T) {
	t.Parallel()
	var s Summary
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Tag.Get("json")
		if name == "-" {
			continue
		}
		v.Field(i).SetFloat(float64(i))
		if f := s.Field(name); f != v.Field(i).Addr().Interface() {
			t.Errorf("Field(%q) is not %s", name, v.Type().Field(i).Name)
		}
		if m, ok := s.Metric(name); !ok || m != float64(i) {
			t.Errorf("Metric(%q) = %v, %v; want %d", name, m, ok, i)
		}
	}
	if _, ok := s.Metric("p42"); ok || s.Field("p42") != nil {
		t.Error("p42 names a field")
	}
}

func TestEncodeDecodeMerge(t *testing.T) {
	t.Parallel()
	a, b := NewRecorder(), NewRecorder()
	for i := int64(1); i <= 1000; i++ {
		a.Record(i * 1000)
		b.Record(i * 2000)
	}
	sa, err := Encode(a.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	da, err := Decode(sa)
	if err != nil {
		t.Fatal(err)
	}
	if !da.Equals(a.Snapshot()) {
		t.Fatal("decoded histogram differs from the encoded one")
	}
	m, dropped := Merge(da, b.Snapshot())
	if dropped != 0 || m.TotalCount() != 2000 {
		t.Fatalf("merged %d values, dropped %d", m.TotalCount(), dropped)
	}
	if _, err := Decode("not base64!"); err == nil {
		t.Fatal("garbage decoded without error")
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		v := int64(12345)
		for pb.Next() {
			r.Record(v)
			v = (v*7 + 13) % 10_000_000
		}
	})
}
