package sweep

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// craftedStep is an open step of n requests at 1000/s whose request i
// took f(i): its service time and its send lag (response = both), in
// intervals of 100 requests (100 ms).
func craftedStep(n int, f func(i int) (serv, lag time.Duration)) *scheduler.Result {
	resp, serv, lag := histo.New(), histo.New(), histo.New()
	var ivs []scheduler.Interval
	ir, is, il := histo.New(), histo.New(), histo.New()
	for i := range n {
		s, l := f(i)
		for _, x := range []struct {
			h *hdrhistogram.Histogram
			v time.Duration
		}{{resp, s + l}, {serv, s}, {lag, l}, {ir, s + l}, {is, s}, {il, l}} {
			_ = x.h.RecordValue(int64(x.v))
		}
		if (i+1)%100 == 0 || i == n-1 {
			iv := scheduler.Interval{Start: time.Duration(len(ivs)) * 100 * time.Millisecond, Duration: 100 * time.Millisecond,
				Counts: scheduler.Counts{Scheduled: 100, Sent: 100, Completed: 100}}
			iv.Response, _ = histo.Pack(ir)
			iv.Service, _ = histo.Pack(is)
			iv.Lag, _ = histo.Pack(il)
			ivs = append(ivs, iv)
			ir, is, il = histo.New(), histo.New(), histo.New()
		}
	}
	return &scheduler.Result{Name: "GET", Mode: "open", TargetRate: timeline.RatePerSecond(1000),
		Counts:   scheduler.Counts{Scheduled: uint64(n), Sent: uint64(n), Completed: uint64(n)},
		Window:   time.Duration(n) * time.Millisecond,
		Response: resp, Service: serv, Lag: lag, LagLimit: time.Millisecond,
		Interval: 100 * time.Millisecond, Intervals: ivs}
}

// TestLengthen: an uncertain point runs one more step at its rate,
// doubling its measured time up to --repeat × the longest step, and is
// then left uncertain; a decided one is not lengthened, nor one judged
// per --slo-window window, nor a shard's.
func TestLengthen(t *testing.T) {
	testrun.SkipRace(t, "one goroutine's arithmetic on crafted results, which the detector only slows")
	const ms, us = time.Millisecond, time.Microsecond
	// 10 of every 1000 requests slow, exactly 1%: the p99's interval
	// holds 1 ms however many they are.
	uncertain := func(i int) (time.Duration, time.Duration) {
		if i%1000 < 10 {
			return 3 * ms, 10 * us
		}
		return 500 * us, 10 * us
	}
	sure := func(int) (time.Duration, time.Duration) { return 500 * us, 10 * us }
	for _, c := range []struct {
		name   string
		f      func(int) (time.Duration, time.Duration)
		window time.Duration
		place  *scheduler.Placement
		want   []time.Duration // the extension after each step, 0: none
	}{
		{"uncertain: 1 s, +1, +2, +2, then no more", uncertain, 0, nil, []time.Duration{time.Second, 2 * time.Second, 2 * time.Second, 0}},
		{"sure", sure, 0, nil, []time.Duration{0}},
		{"--slo-window", uncertain, time.Second, nil, []time.Duration{0}},
		{"a shard", uncertain, 0, &scheduler.Placement{K: 1, N: 2}, []time.Duration{0}},
	} {
		slo, err := verdict.ParseSLO("p99<=1ms")
		if err != nil {
			t.Fatal(err)
		}
		slo.Window = c.window
		cfg := &Config{Test: experiment.Test{Title: "GET"}, SLO: slo, StepDuration: time.Second, Repeat: 1}
		o := &openSweep{cfg: cfg, env: &experiment.Env{Place: c.place}, rule: newSampleRule(slo, time.Second),
			stats: map[*openloop.Step]*serverinfo.Stats{}, index: map[*openPoint]int{}, byRate: map[float64][]*openPoint{}}
		o.cur = o.newPoint(2000)
		step := time.Second
		for k, want := range c.want {
			o.cur.steps = append(o.cur.steps, &openloop.Step{Result: craftedStep(int(2000*step.Seconds()), c.f)})
			o.cur.measured += step
			got := o.lengthen()
			if got != want {
				t.Errorf("%s: after step %d (%s measured): lengthened by %s, want %s (%s: %s)", c.name, k, o.cur.measured, got, want, o.cur.Decision, o.cur.Why)
			}
			if got > 0 {
				o.cur.lengthened++
				step = got
			}
		}
		o.closePoint(false)
		if c.name == "uncertain: 1 s, +1, +2, +2, then no more" && (o.cur.Decision != verdict.StepUncertain || !strings.Contains(o.cur.Why, "after 6s of steps at this rate")) {
			t.Errorf("%s: %s: %s", c.name, o.cur.Decision, o.cur.Why)
		}
	}
}
