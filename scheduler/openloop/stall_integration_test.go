package openloop

import (
	"context"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// pauseWindow is when the server was stopped, on the Now clock.
type pauseWindow struct{ start, end int64 }

// pauseEvery stops srv for d every period, starting one period in; the
// function it returns ends that and returns the windows it made.
func pauseEvery(t *testing.T, srv *redistest.Server, d, period time.Duration) func() []pauseWindow {
	var mu sync.Mutex
	var windows []pauseWindow
	stop := clock.Every(period, func() bool {
		w := pauseWindow{start: scheduler.Now()}
		if err := srv.Pause(); err != nil {
			t.Error(err)
			return false
		}
		time.Sleep(d)
		w.end = scheduler.Now()
		if err := srv.Resume(); err != nil {
			t.Error(err)
			return false
		}
		mu.Lock()
		windows = append(windows, w)
		mu.Unlock()
		return true
	})
	return func() []pauseWindow {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return windows
	}
}

// expectedQuantile computes, from the pause windows alone, the q-quantile
// of response time for n requests sent every period from t0: a request
// intended inside a pause waits for the pause to end, any other is
// answered at once.
func expectedQuantile(windows []pauseWindow, t0 int64, period time.Duration, n int, q float64) time.Duration {
	waits := make([]int64, n)
	for i := range waits {
		ti := t0 + int64(i)*int64(period)
		for _, w := range windows {
			if ti >= w.start && ti < w.end {
				waits[i] = w.end - ti
			}
		}
	}
	sort.Slice(waits, func(a, b int) bool { return waits[a] < waits[b] })
	return time.Duration(waits[int(math.Ceil(q*float64(n)))-1])
}

// TestOpenStallTruth is the latency truth: the server is frozen for 200 ms
// every 2 s under a 10k/s open load, so about 10% of requests land in a
// pause and the response p99 is about 0.9 × 200 ms. Closed-loop tools report
// a few milliseconds here; pacer must report what the schedule implies.
func TestOpenStallTruth(t *testing.T) {
	testrun.SkipShort(t, "takes 8 s")
	srv := redistest.Start(t)
	windowsOf := pauseEvery(t, srv, 200*time.Millisecond, 2*time.Second)

	rate := timeline.RatePerSecond(10000)
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 50, 0), stream(t, "get", 1000), Config{
		Name: "GET", Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 8 * time.Second, Pacing: scheduler.Precise,
	})
	windows := windowsOf()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Counts.Balanced() || res.Counts.Completed != res.Counts.Scheduled {
		t.Fatalf("counts %+v: every request should complete", res.Counts)
	}
	if len(windows) < 3 {
		t.Fatalf("only %d pauses happened", len(windows))
	}
	n := int(res.Counts.Scheduled)
	want := expectedQuantile(windows, res.T0, 100*time.Microsecond, n, 0.99)
	got := time.Duration(res.Response.ValueAtQuantile(99))
	t.Logf("%d pauses; response p99 %.1f ms, the pause schedule implies %.1f ms; service p99 %.1f ms",
		len(windows), histo.Millis(int64(got)), histo.Millis(int64(want)), histo.Millis(res.Service.ValueAtQuantile(99)))
	// Below the schedule is the defect this test exists for (a stall
	// hidden, as coordinated omission hides it): never allowed. Above it,
	// the machine may be the cause: on a loaded machine the test's own
	// goroutine sends SIGCONT late, so the pauses last longer than the
	// recorded windows (the service time then exceeds the pause), or the
	// generator itself falls behind. Only then is a high value excused.
	d := float64(got-want) / float64(want)
	loaded := time.Duration(res.Service.ValueAtQuantile(99)) > 205*time.Millisecond ||
		time.Duration(res.Lag.ValueAtQuantile(99)) > 10*time.Millisecond
	switch {
	case d < -0.15:
		t.Fatalf("response p99 %v is %.0f%% below the %v the pauses imply (limit 15%%)", got, -d*100, want)
	case d > 0.15 && !loaded:
		t.Fatalf("response p99 %v is %.0f%% above the %v the pauses imply (limit 15%%)", got, d*100, want)
	case d > 0.15:
		t.Logf("response p99 %.0f%% above the schedule on a loaded machine (service p99 %v, send lag p99 %v): not held against pacer",
			d*100, time.Duration(res.Service.ValueAtQuantile(99)), time.Duration(res.Lag.ValueAtQuantile(99)))
	}
	// Median: most requests are untouched by the pauses.
	if p50 := time.Duration(res.Response.ValueAtQuantile(50)); p50 > 20*time.Millisecond {
		t.Fatalf("response p50 %v: the pauses should not move the median", p50)
	}
}
