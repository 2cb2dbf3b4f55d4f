package openloop

import (
	"context"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// TestOpenIntervalsAddUpToTheTest: an open run against a real redis-server
// paused for 300 ms in the middle, cut into 100 ms intervals, for the test
// and for each command of a mix. The stall shows where it happened: in
// the interval the server came back, not smeared over the run.
func TestOpenIntervalsAddUpToTheTest(t *testing.T) {
	srv := redistest.Start(t)
	// The pause is timed from the timeline's start: 0.4 s to 0.7 s.
	pause := func(*scheduler.Live) {
		go func() {
			time.Sleep(400 * time.Millisecond)
			srv.Pause()
			time.Sleep(300 * time.Millisecond)
			srv.Resume()
		}()
	}
	cmds, names := drivertest.MixNames(t)
	const d = 100 * time.Millisecond
	rate := timeline.RatePerSecond(5000)
	res := runOpen(t, drivertest.Dial(t, srv.Addr, 4, 0), cmds(1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 1200 * time.Millisecond, Interval: d, CommandNames: names,
		OnStart: pause,
	})
	if res.Interval != d || len(res.Intervals) < 12 {
		t.Fatalf("interval %v, %d intervals for a 1.2 s run", res.Interval, len(res.Intervals))
	}
	drivertest.CheckSeries(t, "test", res.Intervals, d, res.Counts, [3]*hdrhistogram.Histogram{res.Response, res.Service, res.Lag})
	for _, c := range res.Commands {
		drivertest.CheckSeries(t, c.Name, c.Intervals, d, c.Counts, [3]*hdrhistogram.Histogram{c.Response, c.Service, c.Lag})
	}
	// 500 requests intended per 100 ms while the timeline runs.
	for _, iv := range res.Intervals[:12] {
		if iv.Counts.Scheduled < 495 || iv.Counts.Scheduled > 505 {
			t.Fatalf("interval at %v: %d scheduled, want 500", iv.Start, iv.Counts.Scheduled)
		}
	}
	// The requests held by the stall complete when it ends, 0.7 s in:
	// their response time (up to 300 ms) is in an interval from then on.
	// (Not checked: that no other interval is slow. A loaded machine can
	// pause the process anywhere.)
	var stall time.Duration
	for _, iv := range res.Intervals {
		if iv.Start >= 600*time.Millisecond && iv.Start <= 900*time.Millisecond {
			stall = max(stall, time.Duration(iv.Response.Summary.Max*1e6))
		}
	}
	if testrun.RaceEnabled {
		// Encoding an interval's nine histograms takes the race detector
		// longer than the 100 ms interval, so the series falls behind the
		// clock (without it, about 15 ms).
		t.Logf("race detector: the stall's interval is not checked (worst from 0.6 s: %v)", stall)
	} else if stall < 200*time.Millisecond {
		t.Fatalf("the intervals from 0.6 s to 1 s hold a worst response time of %v; the stall that ended at 0.7 s makes it ≥ 200 ms", stall)
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

// TestInterruptedSeriesStillAddsUp: a stop halfway through ends the
// series with the run; the intervals still add up.
func TestInterruptedSeriesStillAddsUp(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	rate := timeline.RatePerSecond(4000)
	const d = 100 * time.Millisecond
	res, err := Run(ctx, drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 10 * time.Second, Interval: d,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Intervals) > 6 {
		t.Fatalf("interrupted %v with %d intervals", res.Interrupted, len(res.Intervals))
	}
	drivertest.CheckSeries(t, "interrupted", res.Intervals, d, res.Counts, [3]*hdrhistogram.Histogram{res.Response, res.Service, res.Lag})
}

// TestWarmupIsSentButNotMeasured: a 1.2 s timeline at 4k/s whose first
// 0.5 s is a warmup, against a redis-server paused for the first 0.4 s.
// The warmup's 2000 requests are sent and answered, and counted only in
// WarmupCounts: the result, its histograms (no sample of the pause), its
// per-command results and its intervals (from 0.5 s) hold the measured
// 2800, and still add up exactly.
func TestWarmupIsSentButNotMeasured(t *testing.T) {
	srv := redistest.Start(t)
	cmds, names := drivertest.MixNames(t)
	const d = 200 * time.Millisecond
	const warmup = 500 * time.Millisecond
	rate := timeline.RatePerSecond(4000)
	tl := timeline.Uniform{Rate: rate}
	res := runOpen(t, drivertest.Dial(t, srv.Addr, 4, 0), cmds(1), Config{
		Timeline: tl, Rate: rate, Duration: 1200 * time.Millisecond, Interval: d, CommandNames: names,
		Warmup: warmup,
		OnStart: func(*scheduler.Live) {
			if err := srv.Pause(); err != nil {
				t.Error(err)
			}
			time.AfterFunc(400*time.Millisecond, func() { _ = srv.Resume() })
		},
	})
	w, c := res.WarmupCounts, res.Counts
	if res.Warmup != warmup || w.Scheduled != 2000 || w.Completed != 2000 || w.Sent != 2000 || !w.Balanced() {
		t.Fatalf("warmup %v, its counts %+v; want 2000 scheduled, sent and completed", res.Warmup, w)
	}
	if c.Scheduled != 2800 || c.Completed != 2800 || c.Sent != 2800 || !c.Balanced() {
		t.Fatalf("measured counts %+v; want the 2800 requests after the warmup", c)
	}
	if n := res.Response.TotalCount(); n != int64(c.Completed) || res.Lag.TotalCount() != int64(c.Sent) {
		t.Fatalf("histograms hold %d responses and %d lags for %d completed", n, res.Lag.TotalCount(), c.Completed)
	}
	// Receive lag is recorded once per read with its count: every reply
	// has one, in the test's and in its command's histogram.
	if n := res.Receive.TotalCount(); n != int64(c.Completed) {
		t.Fatalf("receive lag holds %d replies for %d completed", n, c.Completed)
	}
	for _, cr := range res.Commands {
		if n := cr.Receive.TotalCount(); n != int64(cr.Counts.Completed) {
			t.Fatalf("%s: receive lag holds %d replies for %d completed", cr.Name, n, cr.Counts.Completed)
		}
	}
	// The warmup's requests waited for the pause (up to 400 ms); none of
	// that reaches the measured histogram.
	if m := time.Duration(res.Response.Max()); m > 200*time.Millisecond {
		t.Fatalf("measured response max %v: the warmup's stall leaked into the result", m)
	}
	if res.Window < 700*time.Millisecond || res.Window > 1200*time.Millisecond {
		t.Fatalf("window %v, want the 0.7 s after the warmup (and the last replies)", res.Window)
	}
	drivertest.CheckSeriesFrom(t, "test", warmup, res.Intervals, d, c, [3]*hdrhistogram.Histogram{res.Response, res.Service, res.Lag})
	var perCommand scheduler.Counts
	for _, cr := range res.Commands {
		drivertest.CheckSeriesFrom(t, cr.Name, warmup, cr.Intervals, d, cr.Counts, [3]*hdrhistogram.Histogram{cr.Response, cr.Service, cr.Lag})
		perCommand.Add(cr.Counts)
	}
	if perCommand != c {
		t.Fatalf("commands add up to %+v, the test counts %+v", perCommand, c)
	}
	// The intervals' scheduled counts come from the timeline (the last
	// holds the rest, so it is not checked: a late wake merges it).
	for _, iv := range res.Intervals[:2] {
		if iv.Counts.Scheduled != 800 {
			t.Fatalf("interval at %v: %d scheduled, want 800", iv.Start, iv.Counts.Scheduled)
		}
	}
	var bytesOut uint64
	for _, iv := range res.Intervals {
		bytesOut += iv.BytesSent
	}
	// GET a / SET b x: 20 and 27 bytes; the warmup's are not counted
	// (the bytes count from a reading at the end of the warmup).
	if bytesOut != res.BytesSent || res.BytesSent < 2600*20 || res.BytesSent > 2800*27+200*27 {
		t.Fatalf("bytes sent: intervals %d, test %d, for 2800 measured requests", bytesOut, res.BytesSent)
	}
}

// TestStopDuringWarmup: a run stopped before its warmup ends measured
// nothing, and says so with zero counts and one empty interval.
func TestStopDuringWarmup(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	rate := timeline.RatePerSecond(2000)
	res, err := Run(ctx, drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 10 * time.Second, Warmup: 5 * time.Second,
		Interval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Counts != (scheduler.Counts{}) || res.WarmupCounts.Completed == 0 || !res.WarmupCounts.Balanced() {
		t.Fatalf("interrupted %v, counts %+v, warmup %+v", res.Interrupted, res.Counts, res.WarmupCounts)
	}
	if len(res.Intervals) != 1 || res.Intervals[0].Start != 5*time.Second || res.Intervals[0].Duration != 0 || res.BytesSent != 0 {
		t.Fatalf("intervals %+v, bytes %d", res.Intervals, res.BytesSent)
	}
	if res.Window != 0 || res.TargetGone {
		t.Fatalf("window %v, target gone %v", res.Window, res.TargetGone)
	}
}

// TestLiveTotalsDuringPoisson: live totals count the scheduled requests on
// their own fork of a Poisson timeline, so reading them while the pacer
// walks its own is no data race (go test -race).
func TestLiveTotalsDuringPoisson(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.OK)
	rate := timeline.RatePerSecond(5000)
	done := make(chan struct{})
	var last scheduler.Totals
	read := make(chan struct{})
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.NewPoisson(rate, 7), Rate: rate, Duration: 300 * time.Millisecond,
		OnStart: func(l *scheduler.Live) {
			go func() {
				defer close(read)
				for {
					select {
					case <-done:
						return
					default:
						last = l.Totals()
						time.Sleep(time.Millisecond)
					}
				}
			}()
		},
	})
	close(done)
	<-read
	if err != nil {
		t.Fatal(err)
	}
	if last.Scheduled == 0 || last.Scheduled > res.Counts.Scheduled {
		t.Fatalf("live scheduled %d, the run scheduled %d", last.Scheduled, res.Counts.Scheduled)
	}
}
