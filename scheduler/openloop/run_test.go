package openloop

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// Error replies the fake server sends, shared so they allocate nothing per reply.
var (
	errBoom      = []byte("-ERR boom\r\n")
	errWrongType = []byte("-WRONGTYPE no\r\n")
)

func TestNeverAnsweredRequestsAreTimeoutsWithTheirAge(t *testing.T) {
	t.Parallel()
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return nil, false })
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, srv.Dial(t, 4, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 200, Drain: 300 * time.Millisecond,
	})
	c := res.Counts
	if c.Scheduled != 200 || c.Timeouts != 200 || c.Completed != 0 || !c.Balanced() {
		t.Fatalf("counts %+v, want 200 timeouts", c)
	}
	// Their age so far is in the response histogram: at least the drain.
	if res.Response.TotalCount() != 200 || res.Response.Min() < int64(300*time.Millisecond) {
		t.Fatalf("response histogram: %d values, min %v; want 200 values of at least the drain",
			res.Response.TotalCount(), time.Duration(res.Response.Min()))
	}
	if c.Sent != 200 {
		t.Fatalf("sent %d: a silent server must not stop the sends", c.Sent)
	}
}

func TestErrorRepliesCountedByCode(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) {
		switch k % 4 {
		case 0:
			return errBoom, false
		case 1:
			return errWrongType, false
		}
		return drivertest.Pong, false
	})
	rate := timeline.RatePerSecond(4000)
	res := runOpen(t, srv.Dial(t, 1, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 400,
	})
	c := res.Counts
	if c.Completed != 200 || c.Errors != 200 || !c.Balanced() {
		t.Fatalf("counts %+v, want 200 completed and 200 errors", c)
	}
	if res.ErrorCodes["ERR"] != 100 || res.ErrorCodes["WRONGTYPE"] != 100 {
		t.Fatalf("error codes %v", res.ErrorCodes)
	}
	if res.Response.TotalCount() != 200 || res.Lag.TotalCount() != 400 {
		t.Fatalf("response holds %d (want the 200 completed), lag %d (want all 400 sent)",
			res.Response.TotalCount(), res.Lag.TotalCount())
	}
}

func TestLostConnectionCountsInFlightAsErrorsAndOthersGoOn(t *testing.T) {
	t.Parallel() // a fake server; the checks are counts, not times
	cmds, n := drivertest.PingStream(t)
	// The first connection to send a 20th command is closed on it.
	var closed atomic.Bool
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) {
		if k == 19 && closed.CompareAndSwap(false, true) {
			return nil, true
		}
		return drivertest.Pong, false
	})
	rate := timeline.RatePerSecond(2000)
	res := runOpen(t, srv.Dial(t, 4, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 1000,
	})
	// What was in flight on the lost connection ends in errors; how much
	// that is depends on how far behind the pacer was when it closed (a
	// loaded CI runner had 105 in flight). The others going on is what
	// keeps most completed: without them about 20 a connection would be.
	c := res.Counts
	if !c.Balanced() || c.Completed < 700 || c.Errors == 0 {
		t.Fatalf("counts %+v: want most completed, some errors, all accounted", c)
	}
	if res.ErrorCodes[scheduler.CodeConnectionLost] == 0 || res.ErrorCodes[scheduler.CodeConnectionLost] != c.Errors {
		t.Fatalf("errors %v, want all of kind %q", res.ErrorCodes, scheduler.CodeConnectionLost)
	}
}

func TestInflightCapDelaysSendsAndCountsTheRestUnsent(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return nil, false }) // never answers
	rate := timeline.RatePerSecond(2000)
	res := runOpen(t, srv.Dial(t, 2, 10), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 200, Drain: 50 * time.Millisecond,
	})
	c := res.Counts
	// 2 connections × 10 in flight: 20 sent, the rest could not be.
	if c.Sent != 20 || c.Timeouts != 20 || c.Unsent != 180 || !c.Balanced() {
		t.Fatalf("counts %+v, want 20 sent (timeouts) and 180 unsent", c)
	}
	// Nothing was answered: the target is lost, whatever the lag.
	if c.Completed != 0 {
		t.Fatalf("counts %+v: nothing should have completed", c)
	}
}

func TestCapDelayShowsAsSendLag(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	// The server reads nothing for 100 ms: with a cap of 5 in flight, sends
	// due meanwhile wait for FIFO room.
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	srv.StopReading()
	// The 100 ms count from the timeline's start, not from before the
	// run's set-up (slow under the race detector).
	onStart := func(l *scheduler.Live) {
		go func() {
			for l.T0() == 0 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			srv.ResumeReading()
		}()
	}
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, srv.Dial(t, 1, 5), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 300, OnStart: onStart,
	})
	c := res.Counts
	if c.Completed != 300 || !c.Balanced() {
		t.Fatalf("counts %+v, want all 300 completed", c)
	}
	// Requests due during the 100 ms waited for FIFO room: their lag shows
	// it, and response time counts from the intended time.
	if lagMax := time.Duration(res.Lag.Max()); lagMax < 50*time.Millisecond {
		t.Fatalf("send lag max %v, want the ~100 ms the cap held sends back", lagMax)
	}
	if r := time.Duration(res.Response.Max()); r < time.Duration(res.Lag.Max()) {
		t.Fatalf("response max %v below send lag max %v", r, time.Duration(res.Lag.Max()))
	}
	// The server held the sends back (every FIFO full), not the generator:
	// the run counts the requests it held, which verdict.Judge leaves out of
	// the generator's lag. How long the pacer saw itself blocked depends on
	// when it got a CPU (a loaded machine under -race saw 5 ms of the 100);
	// the requests held are the measure.
	if res.Blocked <= 0 || res.HeldSent < 50 {
		t.Fatalf("blocked %v (%d held): want the held requests counted", res.Blocked, res.HeldSent)
	}
}

func TestInterruptStopsTheTimelineAndStillAccounts(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	rate := timeline.RatePerSecond(1000)
	start := time.Now()
	res, err := Run(ctx, srv.Dial(t, 2, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Duration: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || time.Since(start) > 10*time.Second {
		t.Fatalf("interrupted %v after %v", res.Interrupted, time.Since(start))
	}
	c := res.Counts
	if !c.Balanced() || c.Scheduled == 0 || c.Scheduled > 2000 {
		t.Fatalf("counts %+v: want about 200 scheduled, all accounted", c)
	}
}

func TestAllConnectionsLostEndsTheRun(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) { return nil, k == 3 })
	rate := timeline.RatePerSecond(1000)
	res, err := Run(context.Background(), srv.Dial(t, 2, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Duration: 30 * time.Second,
	})
	if err == nil {
		t.Fatal("no error when every connection was lost")
	}
	if res == nil || !res.Counts.Balanced() || res.Counts.Scheduled > 5000 {
		t.Fatalf("result %+v", res)
	}
}

// runOpen runs Run where the run must not fail.
func runOpen(t *testing.T, conns []*conn.Conn, cmds scheduler.Commands, cfg Config) *scheduler.Result {
	t.Helper()
	res, err := Run(context.Background(), conns, cmds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runOpenMallocs runs Run and counts its allocations, less those of
// packing its histograms: the run fits in one interval, whose histograms
// are packed at the end, and encoding allocates per distinct value, not
// per request, and off the hot path. They are taken out by packing the
// same histograms again.
func runOpenMallocs(t *testing.T, conns []*conn.Conn, cmds scheduler.Commands, cfg Config) (*scheduler.Result, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := runOpen(t, conns, cmds, cfg)
	runtime.ReadMemStats(&after)
	hs := []*hdrhistogram.Histogram{res.Response, res.Service, res.Lag, res.Receive, res.Hiccups}
	for _, c := range res.Commands {
		hs = append(hs, c.Response, c.Service, c.Lag, c.Receive)
	}
	var p0, p1 runtime.MemStats
	runtime.ReadMemStats(&p0)
	for _, h := range hs {
		if _, err := histo.Pack(h); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&p1)
	return res, after.Mallocs - before.Mallocs - (p1.Mallocs - p0.Mallocs)
}

// TestHotPathDoesNotAllocate compares whole runs of different lengths: the
// allocations of setup are the same, so any difference is per request.
func TestHotPathDoesNotAllocate(t *testing.T) {
	mallocs := func(requests uint64, mix bool) uint64 {
		var cmds scheduler.Commands
		var n int
		var names []string
		if mix {
			// Two commands of the same length, so the fake server can
			// count them.
			r, err := scenarios.BuildRecipe("", []scenarios.Custom{
				{Name: "a", Args: []string{"GET", "a"}, Weight: 3}, {Name: "b", Args: []string{"GET", "b"}, Weight: 1}}, scenarios.Options{})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := r.Build()
			cmds, n, names = scenarios.NewMixStream(m, 1, scenarios.Uniform{}), len("*2\r\n$3\r\nGET\r\n$1\r\na\r\n"), []string{"a", "b"}
		} else {
			cmds, n = drivertest.PingStream(t)
		}
		srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
		conns := srv.Dial(t, 2, 0)
		rate := timeline.RatePerSecond(40000)
		cfg := Config{Timeline: timeline.Uniform{Rate: rate}, Requests: requests, CommandNames: names}
		cfg.Events = true // the tally of every request's outcome too
		_, m := runOpenMallocs(t, conns, cmds, cfg)
		return m
	}
	short, long := mallocs(1000, false), mallocs(9000, false)
	perRequest := (float64(long) - float64(short)) / 8000
	t.Logf("%d allocations for 1000 requests, %d for 9000", short, long)
	mshort, mlong := mallocs(1000, true), mallocs(9000, true)
	if per := (float64(mlong) - float64(mshort)) / 8000; per > 0.05 {
		t.Fatalf("a mix: %.2f allocations per request on the hot path", per)
	}
	// Allow for stray runtime allocations (timers, the test's own
	// goroutines), far below one per request.
	if perRequest > 0.05 {
		t.Fatalf("%.2f allocations per request on the hot path", perRequest)
	}
}
