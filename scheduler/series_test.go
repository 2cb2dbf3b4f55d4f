package scheduler

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
)

// TestSeriesMemoryPerInterval: an hour of one-second intervals keeps a few
// MB in memory, whatever the rate: the histograms are spilled, only their
// summaries stay. Each of 600 intervals here gets 20,000 latencies spread
// from 50 µs to 500 ms (thousands of distinct buckets, a wide case for the
// encoding).
func TestSeriesMemoryPerInterval(t *testing.T) {
	testrun.SkipShort(t, "records 36 million values")
	testrun.SkipRace(t, "it makes recording 36 million values minutes (the memory is the same without it)")
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	s := NewSeries(time.Hour, 0, func() Totals { return Totals{} }, nil, SeriesRecorders{Response: resp, Service: serv, Lag: lag}, nil)
	s.Begin(nanotime())
	defer s.Finish(nanotime(), Totals{}, nil)
	rng := uint64(1)
	fill := func() {
		for range 20_000 {
			rng = rng*6364136223846793005 + 1442695040888963407
			v := int64(50_000 + (rng>>33)%500_000_000)
			resp.Record(v)
			serv.Record(v / 2)
			lag.Record(v / 1000)
		}
	}
	heap := func() uint64 {
		// Twice: a sync.Pool's items (the pooled compressor, ~800 KB)
		// outlive one collection, and must be out of both readings.
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// The slope between interval 100 and interval 600: what is live once
	// (the spill's buffers, grown slices) is in both readings.
	const warm, n = 100, 600
	var before uint64
	for k := int64(1); k <= n; k++ {
		fill()
		s.mu.Lock()
		s.take(k, Totals{})
		s.mu.Unlock()
		if k == warm {
			before = heap()
		}
	}
	after := heap()
	per := float64(after-before) / (n - warm)
	t.Logf("%.0f bytes of memory per interval: %.1f MB per hour of 1 s intervals", per, per*3600/1e6)
	if per > 2048 {
		t.Fatalf("%.0f bytes per interval: an hour would hold %.0f MB", per, per*3600/1e6)
	}
}

// TestSeriesRetakesALook: a look that says LookAgain is taken again at
// each following interval's end (planned false) until it says otherwise;
// the planned looks keep their times, and LookEnd cuts the run.
func TestSeriesRetakesALook(t *testing.T) {
	const d = 10 * time.Millisecond
	type call struct {
		intervals int
		planned   bool
	}
	script := []LookNext{LookAgain, LookAgain, LookOn, LookEnd}
	var calls []call
	cut := make(chan struct{})
	looks := &Looks{From: 2 * d, Every: 5 * d, Look: func(ivs []Interval, planned bool) LookNext {
		calls = append(calls, call{len(ivs), planned})
		return script[len(calls)-1]
	}}
	s := NewSeries(d, 0, func() Totals { return Totals{} }, nil, SeriesRecorders{Response: histo.NewRecorder()}, nil)
	s.SetLooks(looks, nil, func() { close(cut) })
	s.Begin(nanotime())
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("no look ended the series")
	}
	if _, _, err := s.Finish(nanotime(), Totals{}, nil); err != nil {
		t.Fatal(err)
	}
	want := []call{{2, true}, {3, false}, {4, false}, {7, true}}
	if !slices.Equal(calls, want) {
		t.Fatalf("looks %v, want %v", calls, want)
	}
}

// TestSeriesCutsWhileALookRuns: a look that runs for several intervals
// does not hold up their ends (the series closes them meanwhile, each of
// its own length), and the next planned look judges the intervals up to
// its own, not those closed by the time it runs.
func TestSeriesCutsWhileALookRuns(t *testing.T) {
	const d = 10 * time.Millisecond
	var s *Series
	closed := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.out)
	}
	var calls []int
	cut := make(chan struct{})
	looks := &Looks{From: d, Every: 2 * d, Look: func(ivs []Interval, planned bool) LookNext {
		calls = append(calls, len(ivs))
		if len(calls) > 1 {
			return LookEnd
		}
		for deadline := time.Now().Add(10 * time.Second); closed() < 5; time.Sleep(d) {
			if time.Now().After(deadline) {
				t.Error("no interval closed while the look ran")
				return LookEnd
			}
		}
		return LookOn
	}}
	s = NewSeries(d, 0, func() Totals { return Totals{} }, nil, SeriesRecorders{Response: histo.NewRecorder()}, nil)
	s.SetLooks(looks, nil, func() { close(cut) })
	s.Begin(nanotime())
	select {
	case <-cut:
	case <-time.After(20 * time.Second):
		t.Fatal("no look ended the series")
	}
	if _, _, err := s.Finish(nanotime(), Totals{}, nil); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 3}; !slices.Equal(calls, want) {
		t.Fatalf("looks judged %v intervals, want %v", calls, want)
	}
}
