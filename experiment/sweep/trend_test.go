package sweep

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// trendStep is a crafted step at 100/s: n full intervals of 1 s whose
// response p50s are p50s[i] ms and whose requests in flight at the end
// are inFlight[i], then two intervals of the drain (nothing scheduled,
// the queue emptying) and a last one, the drain's tail, with nothing in
// flight.
func trendStep(t *testing.T, p50s []float64, inFlight []uint64) *scheduler.Result {
	t.Helper()
	r := &scheduler.Result{Mode: "open", Interval: time.Second, TargetRate: timeline.RatePerSecond(100)}
	for i := range p50s {
		h := histo.New()
		for range 100 {
			_ = h.RecordValue(int64(p50s[i] * 1e6))
		}
		pk, err := histo.Pack(h)
		if err != nil {
			t.Fatal(err)
		}
		r.Intervals = append(r.Intervals, scheduler.Interval{Start: time.Duration(i) * time.Second, Duration: time.Second, Response: pk,
			InFlight: inFlight[i], Counts: scheduler.Counts{Scheduled: 100}})
	}
	for k, f := range []uint64{inFlight[len(inFlight)-1] / 2, 0} {
		h := histo.New()
		_ = h.RecordValues(int64(p50s[len(p50s)-1]*2e6), 100)
		pk, _ := histo.Pack(h)
		r.Intervals = append(r.Intervals, scheduler.Interval{Start: time.Duration(len(p50s)+k) * time.Second, Duration: time.Second, Response: pk, InFlight: f})
	}
	r.Intervals = append(r.Intervals, scheduler.Interval{Start: time.Duration(len(p50s)+2) * time.Second, Duration: 30 * time.Millisecond})
	return r
}

// TestPointTrend: a step fails as unsustainable only when its p50 and its
// requests in flight both rise (each at 1%, divided by the point's steps);
// the drain's tail is left out.
func TestPointTrend(t *testing.T) {
	up := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	upIF := []uint64{1, 2, 4, 8, 16}
	flat := []float64{0.2, 0.1, 0.3, 0.2, 0.1}
	flatIF := []uint64{1, 0, 1, 2, 1}
	for _, c := range []struct {
		name   string
		steps  [][2]any
		rising bool
		n      int
	}{
		{"both rise over 5 intervals", [][2]any{{up, upIF}}, true, 5},
		{"p50 alone rises", [][2]any{{up, flatIF}}, false, 5},
		{"in-flight alone rises", [][2]any{{flat, upIF}}, false, 5},
		{"4 intervals cannot reach 1%", [][2]any{{up[:4], upIF[:4]}}, false, 4},
		// Two steps: each at 0.5%; 5 intervals give 0.0083, not enough.
		{"a second step halves α", [][2]any{{flat, flatIF}, {up, upIF}}, false, 5},
		{"six intervals in the second step", [][2]any{{flat, flatIF}, {append(up, 0.6), append(upIF, 32)}}, true, 6},
	} {
		var steps []*scheduler.Result
		for _, st := range c.steps {
			steps = append(steps, trendStep(t, st[0].([]float64), st[1].([]uint64)))
		}
		tr, err := pointTrend(steps)
		if err != nil {
			t.Fatal(err)
		}
		if tr == nil || tr.Rising != c.rising || tr.Intervals != c.n {
			t.Errorf("%s: %+v; want rising %v over %d intervals", c.name, tr, c.rising, c.n)
		}
	}
	// A step of one measured interval has no trend.
	if tr, err := pointTrend([]*scheduler.Result{trendStep(t, up[:1], upIF[:1])}); err != nil || tr != nil {
		t.Errorf("one interval: %+v, %v", tr, err)
	}
}
