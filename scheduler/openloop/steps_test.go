package openloop

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// runSteps runs RunSteps and wants one step for each of its n
// plans.
func runSteps(t *testing.T, conns []*conn.Conn, cmds scheduler.Commands, cfg Config, next func(int, *Step) (StepPlan, bool), n int) []*Step {
	t.Helper()
	steps, err := RunSteps(context.Background(), conns, cmds, cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != n {
		t.Fatalf("%d steps, want %d", len(steps), n)
	}
	return steps
}

// plans returns a next function for RunSteps that runs the given rates
// with the same settle and duration, recording the prev it was given.
func plans(rates []float64, settle, d time.Duration, prevs *[]*Step) func(int, *Step) (StepPlan, bool) {
	return func(i int, prev *Step) (StepPlan, bool) {
		*prevs = append(*prevs, prev)
		if i >= len(rates) {
			return StepPlan{}, false
		}
		r := timeline.RatePerSecond(rates[i])
		return StepPlan{Name: "step", Timeline: timeline.Uniform{Rate: r}, Rate: r, Duration: d, Settle: settle}, true
	}
}

// TestStepsKeepTheirConnectionsAndBalance: three steps over four
// connections open no other connection; every step accounts for exactly
// the requests intended after its settle window, and the server received
// the settle windows' requests too.
func TestStepsKeepTheirConnectionsAndBalance(t *testing.T) {
	t.Parallel()
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	conns := srv.Dial(t, 4, 0)
	rates := []float64{1000, 2000, 3000}
	settle, d := 100*time.Millisecond, 200*time.Millisecond
	var prevs []*Step
	steps := runSteps(t, conns, cmds, Config{Interval: 50 * time.Millisecond}, plans(rates, settle, d, &prevs), len(rates))
	var all uint64
	for i, st := range steps {
		tl := timeline.Uniform{Rate: timeline.RatePerSecond(rates[i])}
		want := timeline.Count(tl, int64(settle+d), 1<<62) - timeline.Count(tl, int64(settle), 1<<62)
		all += timeline.Count(tl, int64(settle+d), 1<<62)
		c := st.Counts
		if st.Index != i || c.Scheduled != want || c.Completed != want || c.Sent != want || !c.Balanced() {
			t.Fatalf("step %d (index %d): counts %+v, want %d scheduled, sent and completed", i, st.Index, c, want)
		}
		if got := st.Response.TotalCount(); got != int64(want) || st.Lag.TotalCount() != int64(want) {
			t.Fatalf("step %d: %d response and %d lag samples, want %d (the settle window's left out)", i, got, st.Lag.TotalCount(), want)
		}
		if st.Expired != 0 || st.Reconnects != 0 || st.ConnsLost != 0 || st.Aborted {
			t.Fatalf("step %d: expired %d, reconnects %d, lost %d, aborted %v", i, st.Expired, st.Reconnects, st.ConnsLost, st.Aborted)
		}
		if st.Settle != settle || st.Window < d {
			t.Fatalf("step %d: settle %v, window %v (want at least %v)", i, st.Settle, st.Window, d)
		}
		drivertest.CheckSeriesFrom(t, "step", settle, st.Intervals, 50*time.Millisecond, st.Counts, [3]*hdrhistogram.Histogram{st.Response, st.Service, st.Lag})
		if prevs[i+1] != st {
			t.Fatalf("next(%d) was not given step %d", i+1, i)
		}
	}
	if prevs[0] != nil {
		t.Fatal("next(0) was given a previous step")
	}
	accepted := srv.Accepted()
	if accepted != len(conns) {
		t.Fatalf("the server accepted %d connections for %d: steps reconnected", accepted, len(conns))
	}
	if got := uint64(srv.Received()); got != all {
		t.Fatalf("the server received %d commands, the steps intended %d (settle included)", got, all)
	}
}

// TestStepSettleRequestsAreNotMeasured: on one connection the settle
// window's requests are answered with errors, the rest with PONG; the
// step shows no error, and the next step on the same connection starts
// clean.
func TestStepSettleRequestsAreNotMeasured(t *testing.T) {
	t.Parallel()
	cmds, n := drivertest.PingStream(t)
	rate := timeline.RatePerSecond(2000)
	settle, d := 100*time.Millisecond, 100*time.Millisecond
	settleN := int(timeline.Count(timeline.Uniform{Rate: rate}, int64(settle), 1<<62))
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) {
		if k < settleN {
			return errBoom, false
		}
		return drivertest.Pong, false
	})
	var prevs []*Step
	steps, err := RunSteps(context.Background(), srv.Dial(t, 1, 0), cmds, Config{},
		plans([]float64{2000, 2000}, settle, d, &prevs))
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		c := st.Counts
		if c.Errors != 0 || len(st.ErrorCodes) != 0 || c.Completed != c.Scheduled || c.Scheduled == 0 || !c.Balanced() {
			t.Fatalf("step %d: counts %+v, codes %v: the settle window's errors leaked in", i, c, st.ErrorCodes)
		}
	}
}

// TestStepAbortsWhenTheOldestRequestWaitsTooLong: a server that stops
// answering ends a 10 s step within its abort bound; its requests are
// accounted for (timeouts), its connections are replaced, and the next
// step runs on the new ones.
func TestStepAbortsWhenTheOldestRequestWaitsTooLong(t *testing.T) {
	t.Parallel()
	cmds, n := drivertest.PingStream(t)
	var silent atomic.Bool
	silent.Store(true)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) {
		if silent.Load() {
			return nil, false
		}
		return drivertest.Pong, false
	})
	rate := timeline.RatePerSecond(1000)
	steps, err := RunSteps(context.Background(), srv.Dial(t, 2, 0), cmds,
		Config{Redial: redialTo(srv.Addr())},
		func(i int, prev *Step) (StepPlan, bool) {
			switch i {
			case 0:
				return StepPlan{Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 10 * time.Second, AbortAfter: 50 * time.Millisecond}, true
			case 1:
				silent.Store(false)
				return StepPlan{Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 100 * time.Millisecond}, true
			}
			return StepPlan{}, false
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2", len(steps))
	}
	a := steps[0]
	full := timeline.Count(timeline.Uniform{Rate: rate}, int64(10*time.Second), 1<<62)
	if !a.Aborted || a.AbortReason == "" || a.Interrupted || a.Counts.Scheduled >= full/2 {
		t.Fatalf("step 0: aborted %v (%s), interrupted %v, scheduled %d of %d", a.Aborted, a.AbortReason, a.Interrupted, a.Counts.Scheduled, full)
	}
	if c := a.Counts; !c.Balanced() || c.Timeouts == 0 || c.Completed != 0 || a.Expired != 2 {
		t.Fatalf("step 0: counts %+v, expired %d; want timeouts only, both connections expired", c, a.Expired)
	}
	b := steps[1]
	if c := b.Counts; !c.Balanced() || c.Completed != c.Scheduled || c.Scheduled != 100 || b.Aborted || b.Reconnects != 0 {
		t.Fatalf("step 1: counts %+v, aborted %v, reconnects %d", c, b.Aborted, b.Reconnects)
	}
	accepted := srv.Accepted()
	if accepted != 4 {
		t.Fatalf("the server accepted %d connections, want 2 and their 2 replacements", accepted)
	}
}

// TestStepsStopOnCancel: a cancelled context ends the step under way as
// interrupted and starts no other.
func TestStepsStopOnCancel(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled 100 ms into the first step (however long setting up took).
	var once sync.Once
	onStart := func(*scheduler.Live) { once.Do(func() { time.AfterFunc(100*time.Millisecond, cancel) }) }
	var prevs []*Step
	steps, err := RunSteps(ctx, srv.Dial(t, 2, 0), cmds, Config{OnStart: onStart},
		plans([]float64{1000, 1000, 1000}, 0, 10*time.Second, &prevs))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || !steps[0].Interrupted || !steps[0].Counts.Balanced() {
		t.Fatalf("%d steps, want the first, interrupted and balanced", len(steps))
	}
}
