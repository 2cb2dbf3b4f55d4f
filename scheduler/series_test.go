package scheduler

import (
	"context"
	"runtime"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
)

// checkSeries verifies that a series adds up to what it cuts: counts sum
// to counts, each histogram's intervals merge to the histogram exactly
// (same count, same p99.9 and max), intervals are contiguous from 0.
func checkSeries(t *testing.T, what string, ivs []Interval, d time.Duration, total Counts, hs [3]*hdrhistogram.Histogram) {
	t.Helper()
	if len(ivs) == 0 {
		t.Fatalf("%s: no intervals", what)
	}
	var sum Counts
	merged := [3]*hdrhistogram.Histogram{histo.New(), histo.New(), histo.New()}
	for k, iv := range ivs {
		if iv.Start != time.Duration(k)*d || (k < len(ivs)-1 && iv.Duration != d) || iv.Duration < 0 {
			t.Fatalf("%s: interval %d starts at %v and lasts %v, with intervals of %v", what, k, iv.Start, iv.Duration, d)
		}
		sum.Add(iv.Counts)
		for i, p := range [3]histo.Packed{iv.Response, iv.Service, iv.Lag} {
			h, err := p.Histogram()
			if err != nil {
				t.Fatalf("%s: interval %d: %v", what, k, err)
			}
			if h.TotalCount() != p.Summary.Count {
				t.Fatalf("%s: interval %d: summary of %d samples for %d", what, k, p.Summary.Count, h.TotalCount())
			}
			merged[i].Merge(h)
		}
	}
	if sum != total {
		t.Fatalf("%s: intervals sum to %+v, the test counts %+v", what, sum, total)
	}
	for i, h := range hs {
		if h == nil {
			if merged[i].TotalCount() != 0 {
				t.Fatalf("%s: histogram %d: intervals hold %d samples of a histogram the test does not have", what, i, merged[i].TotalCount())
			}
			continue
		}
		m := merged[i]
		if m.TotalCount() != h.TotalCount() || m.ValueAtQuantile(99.9) != h.ValueAtQuantile(99.9) || m.Max() != h.Max() || m.Min() != h.Min() {
			t.Fatalf("%s: histogram %d: intervals merge to %d samples (p99.9 %d, max %d), the test has %d (p99.9 %d, max %d)",
				what, i, m.TotalCount(), m.ValueAtQuantile(99.9), m.Max(), h.TotalCount(), h.ValueAtQuantile(99.9), h.Max())
		}
	}
}

func mixNames(t *testing.T) (func(seed uint64) Commands, []string) {
	t.Helper()
	r, err := scenarios.BuildRecipe("", []scenarios.Custom{
		{Name: "a", Args: []string{"GET", "a"}, Weight: 3}, {Name: "b", Args: []string{"SET", "b", "x"}, Weight: 1}}, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Build()
	if err != nil {
		t.Fatal(err)
	}
	return func(seed uint64) Commands { return scenarios.NewMixStream(m, seed, scenarios.Uniform{}) }, []string{"a", "b"}
}

// TestOpenIntervalsAddUpToTheTest: an open run against a real redis-server
// paused for 300 ms in the middle, cut into 100 ms intervals, for the test
// and for each command of a mix. The stall shows where it happened: in
// the interval the server came back, not smeared over the run.
func TestOpenIntervalsAddUpToTheTest(t *testing.T) {
	srv := redistest.Start(t)
	go func() {
		time.Sleep(400 * time.Millisecond)
		srv.Pause()
		time.Sleep(300 * time.Millisecond)
		srv.Resume()
	}()
	cmds, names := mixNames(t)
	const d = 100 * time.Millisecond
	rate := RatePerSecond(5000)
	res, err := RunOpen(context.Background(), dial(t, srv.Addr, 4, 0), cmds(1), OpenConfig{
		Timeline: Uniform{Rate: rate}, Rate: rate, Duration: 1200 * time.Millisecond, Interval: d, CommandNames: names,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Interval != d || len(res.Intervals) < 12 {
		t.Fatalf("interval %v, %d intervals for a 1.2 s run", res.Interval, len(res.Intervals))
	}
	checkSeries(t, "test", res.Intervals, d, res.Counts, [3]*hdrhistogram.Histogram{res.Response, res.Service, res.Lag})
	for _, c := range res.Commands {
		checkSeries(t, c.Name, c.Intervals, d, c.Counts, [3]*hdrhistogram.Histogram{c.Response, c.Service, c.Lag})
	}
	// 500 requests intended per 100 ms while the timeline runs.
	for _, iv := range res.Intervals[:12] {
		if iv.Counts.Scheduled < 495 || iv.Counts.Scheduled > 505 {
			t.Fatalf("interval at %v: %d scheduled, want 500", iv.Start, iv.Counts.Scheduled)
		}
	}
	// The requests held by the stall complete when it ends, 0.7 s in:
	// their response time (up to 300 ms) is in an interval from then on,
	// while the intervals before the stall stay fast.
	var worst time.Duration
	var at time.Duration
	for _, iv := range res.Intervals {
		if m := time.Duration(iv.Response.Summary.Max * 1e6); m > worst {
			worst, at = m, iv.Start
		}
	}
	if worst < 200*time.Millisecond || at < 600*time.Millisecond || at > 900*time.Millisecond {
		t.Fatalf("the worst response time %v is in the interval at %v; want ≥ 200 ms at about 0.7 s", worst, at)
	}
	var bytesOut, bytesIn uint64
	for _, iv := range res.Intervals {
		bytesOut += iv.BytesSent
		bytesIn += iv.BytesReceived
	}
	if bytesOut != res.BytesSent || bytesIn != res.BytesReceived || res.BytesSent < res.Counts.Sent*14 || res.BytesReceived < res.Counts.Completed*4 {
		t.Fatalf("bytes: intervals %d out %d in, test %d out %d in, for %d sent", bytesOut, bytesIn, res.BytesSent, res.BytesReceived, res.Counts.Sent)
	}
}

// TestClosedIntervalsAddUpToTheTest: the same for the closed loop, with a
// mix, against a server that answers everything.
func TestClosedIntervalsAddUpToTheTest(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	cmds, names := mixNames(t)
	const d = 50 * time.Millisecond
	res, err := RunClosed(context.Background(), dial(t, srv.Addr, 3, 0), ClosedConfig{
		Duration: 300 * time.Millisecond, Pipeline: 4, Interval: d, CommandNames: names,
		NewCommands: func(i int) Commands { return cmds(uint64(i)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) < 6 || res.Counts.Completed == 0 {
		t.Fatalf("%d intervals, counts %+v", len(res.Intervals), res.Counts)
	}
	checkSeries(t, "closed", res.Intervals, d, res.Counts, [3]*hdrhistogram.Histogram{res.Response, res.Service, nil})
	var bytesOut, bytesIn uint64
	for _, iv := range res.Intervals {
		bytesOut, bytesIn = bytesOut+iv.BytesSent, bytesIn+iv.BytesReceived
	}
	if bytesOut != res.BytesSent || bytesIn != res.BytesReceived || res.BytesSent < res.Counts.Sent*14 || res.BytesReceived < res.Counts.Completed*5 {
		t.Fatalf("bytes: intervals %d out %d in, test %d out %d in, for %d sent", bytesOut, bytesIn, res.BytesSent, res.BytesReceived, res.Counts.Sent)
	}
	for _, c := range res.Commands {
		checkSeries(t, c.Name, c.Intervals, d, c.Counts, [3]*hdrhistogram.Histogram{c.Response, c.Service, nil})
	}
}

// TestInterruptedSeriesStillAddsUp: a stop halfway through ends the
// series with the run; the intervals still add up.
func TestInterruptedSeriesStillAddsUp(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	rate := RatePerSecond(4000)
	const d = 100 * time.Millisecond
	res, err := RunOpen(ctx, dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), OpenConfig{
		Timeline: Uniform{Rate: rate}, Rate: rate, Duration: 10 * time.Second, Interval: d,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Intervals) > 6 {
		t.Fatalf("interrupted %v with %d intervals", res.Interrupted, len(res.Intervals))
	}
	checkSeries(t, "interrupted", res.Intervals, d, res.Counts, [3]*hdrhistogram.Histogram{res.Response, res.Service, res.Lag})
}

// TestSeriesMemoryPerInterval: an hour of one-second intervals keeps a few
// MB in memory, whatever the rate: the histograms are spilled, only their
// summaries stay. Each of 600 intervals here gets 20,000 latencies spread
// from 50 µs to 500 ms (thousands of distinct buckets, a wide case for the
// encoding).
func TestSeriesMemoryPerInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("records 36 million values")
	}
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	s := newSeries(time.Hour, nanotime(), func() Totals { return Totals{} }, resp, serv, lag, nil)
	defer s.finish(nanotime(), Totals{}, nil)
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
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n = 600
	fill()
	s.mu.Lock()
	s.take(1, Totals{})
	s.mu.Unlock()
	before := heap()
	for k := int64(2); k <= n; k++ {
		fill()
		s.mu.Lock()
		s.take(k, Totals{})
		s.mu.Unlock()
	}
	after := heap()
	per := float64(after-before) / (n - 1)
	t.Logf("%.0f bytes of memory per interval: %.1f MB per hour of 1 s intervals", per, per*3600/1e6)
	if per > 2048 {
		t.Fatalf("%.0f bytes per interval: an hour would hold %.0f MB", per, per*3600/1e6)
	}
}
