package closedloop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

func closedCommands(t *testing.T, title string, o scenarios.Options) func(int) scheduler.Commands {
	tests, err := scenarios.Select(title)
	if err != nil {
		t.Fatal(err)
	}
	return func(i int) scheduler.Commands {
		tpl, err := tests[0].Compile(o, false)
		if err != nil {
			t.Fatal(err)
		}
		return scenarios.NewStream(tpl, uint64(i+1))
	}
}

func TestClosedSendsExactlyNAndCountsMatchServer(t *testing.T) {
	srv := redistest.Start(t)
	for _, p := range []int{1, 16} {
		if _, err := srv.Do("CONFIG", "RESETSTAT"); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 7, 0), Config{
			Name: "SET", Requests: 1001, Pipeline: p,
			NewCommands: closedCommands(t, "set", scenarios.Options{Sizes: scenarios.FixedSize(3), Keyspace: 100}),
		})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Counts
		if c.Scheduled != 1001 || c.Sent != 1001 || c.Completed != 1001 || !c.Balanced() {
			t.Fatalf("-P %d: counts %+v", p, c)
		}
		if got := drivertest.CommandCalls(t, srv, "set"); got != 1001 {
			t.Fatalf("-P %d: server saw %d SETs, want exactly 1001", p, got)
		}
		if res.Response.TotalCount() != 1001 || res.Micros.TotalCount() != 1001 {
			t.Fatalf("-P %d: histograms hold %d and %d", p, res.Response.TotalCount(), res.Micros.TotalCount())
		}
		if res.Mode != "closed" || res.Lag != nil {
			t.Fatalf("mode %q, lag %v", res.Mode, res.Lag)
		}
	}
}

// TestClosedFirstReplyVersusPerReply: the server answers the first
// command of a batch at once and the rest only after replyGap, so the
// later replies cannot arrive before replyGap after the write. Per-reply
// latency records them at least that late; first-reply latency records
// the first reply's time for all of them, one value per batch. No bound
// depends on how fast the machine is.
func TestClosedFirstReplyVersusPerReply(t *testing.T) {
	const replyGap = 20 * time.Millisecond
	const pipeline = 10
	var seen atomic.Int64
	srv := hostile.Start(t, hostile.Serve(func([]string) string {
		if seen.Add(1)%pipeline == 2 { // the second command of each batch
			time.Sleep(replyGap)
		}
		return "+PONG\r\n"
	}))
	cmds, _ := pingCommands(t)
	run := func(mode LatencyMode) *scheduler.Result {
		seen.Store(0)
		res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 1, 0), Config{
			Requests: 3 * pipeline, Pipeline: pipeline, NewCommands: cmds, Latency: mode})
		if err != nil || res.Counts.Completed != 3*pipeline {
			t.Fatalf("err %v, counts %+v", err, res.Counts)
		}
		return res
	}
	first, per := run(FirstReply), run(PerReply)
	// First-reply: 3 batches, each one value recorded 10 times.
	counts := first.Response.Export().Counts
	if n := nonEmpty(counts); n > 3 {
		t.Fatalf("first-reply latency has %d distinct buckets, want at most one per batch", n)
	}
	for _, c := range counts {
		if c != 0 && c%pipeline != 0 {
			t.Fatalf("first-reply bucket holds %d samples, want whole batches of %d", c, pipeline)
		}
	}
	// Per-reply: the 9 later replies of each batch came after the gap.
	late := per.Response.TotalCount() - countBelow(per.Response, int64(replyGap))
	if late < 3*(pipeline-1) {
		t.Fatalf("per-reply: %d replies at or above %v, want the %d later replies of each batch", late, replyGap, 3*(pipeline-1))
	}
}

// countBelow counts the samples of h below v.
func countBelow(h *hdrhistogram.Histogram, v int64) int64 {
	n := int64(0)
	for _, b := range h.Distribution() {
		if b.To < v {
			n += b.Count
		}
	}
	return n
}

func nonEmpty(counts []int64) int {
	n := 0
	for _, c := range counts {
		if c != 0 {
			n++
		}
	}
	return n
}

// pingCommands gives every connection its own PING stream.
func pingCommands(t *testing.T) (func(int) scheduler.Commands, int) {
	_, n := drivertest.PingStream(t)
	return func(int) scheduler.Commands { s, _ := drivertest.PingStream(t); return s }, n
}

func TestClosedErrorReplyEndsTheRunUnlessContinuing(t *testing.T) {
	srv := redistest.Start(t)
	if _, err := srv.Do("SET", "str", "x"); err != nil {
		t.Fatal(err)
	}
	cmds := func(int) scheduler.Commands {
		tpl, _ := scenarios.Compile("LPUSH str", []string{"LPUSH", "str", "a"}, scenarios.Options{})
		return scenarios.NewStream(tpl, 1)
	}
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 2, 0), Config{Requests: 1000, NewCommands: cmds})
	var er *ErrorReply
	if !errors.As(err, &er) || er.Error() != "Error from server: WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("err %v", err)
	}
	if !res.Counts.Balanced() || res.Counts.Errors == 0 || res.Counts.Unsent == 0 {
		t.Fatalf("counts %+v: the run should stop early with every request accounted", res.Counts)
	}
	var shown atomic.Int64
	res, err = Run(context.Background(), drivertest.Dial(t, srv.Addr, 2, 0), Config{
		Requests: 300, NewCommands: cmds, ContinueOnError: true,
		OnErrorReply: func([]byte) { shown.Add(1) },
	})
	if err != nil || res.Counts.Errors != 300 || res.ErrorCodes["WRONGTYPE"] != 300 || shown.Load() != 300 {
		t.Fatalf("continuing: err %v counts %+v codes %v shown %d", err, res.Counts, res.ErrorCodes, shown.Load())
	}
}

func TestClosedLostConnectionFails(t *testing.T) {
	cmds, n := pingCommands(t)
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) { return drivertest.Pong, k == 50 })
	res, err := Run(context.Background(), srv.Dial(t, 1, 0), Config{
		Requests: 1000, NewCommands: cmds,
	})
	var lost *ConnLostError
	if !errors.As(err, &lost) || err.Error() != "Error: Server closed the connection" {
		t.Fatalf("err %v, want redis-benchmark's lost connection", err)
	}
	if !res.Counts.Balanced() || res.Counts.Completed != 50 || res.ErrorCodes[scheduler.CodeConnectionLost] != 1 {
		t.Fatalf("counts %+v codes %v", res.Counts, res.ErrorCodes)
	}
}

func TestClosedKeepAliveOffReconnects(t *testing.T) {
	srv := redistest.Start(t)
	before, _ := srv.Info("stats")
	dials := atomic.Int64{}
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 2, 0), Config{
		Requests: 40, NewCommands: closedCommands(t, "ping_mbulk", scenarios.Options{}),
		Reconnect: func(ctx context.Context) (*conn.Conn, error) {
			dials.Add(1)
			return conn.Dial(ctx, conn.Options{Addr: srv.Addr, SkipProbe: true, Now: scheduler.Now})
		},
	})
	if err != nil || res.Counts.Completed != 40 {
		t.Fatalf("err %v counts %+v", err, res.Counts)
	}
	after, _ := srv.Info("stats")
	if dials.Load() < 36 || after["total_connections_received"] == before["total_connections_received"] {
		t.Fatalf("%d reconnects", dials.Load())
	}
}

func TestClosedThrottledByRate(t *testing.T) {
	srv := redistest.Start(t)
	rate := timeline.RatePerSecond(2000)
	start := time.Now()
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 4, 0), Config{
		Requests: 1000, Rate: rate, NewCommands: closedCommands(t, "get", scenarios.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	// 1000 at 2000/s: about half a second, and never much faster.
	if el := time.Since(start); el < 350*time.Millisecond {
		t.Fatalf("1000 requests at 2000/s took %v", el)
	}
	if res.Lag == nil || res.Lag.TotalCount() != 1000 || res.TargetRate != rate {
		t.Fatalf("throttled result lacks its schedule: lag %v rate %v", res.Lag, res.TargetRate)
	}
	// Sending covered the timeline of the 1000 (to the instant past the
	// last, 0.5 s) and ended there, or at the last write if later; the
	// window ends with the last reply, which can come before 0.5 s (the
	// last request is due at 499.5 ms).
	if res.SendWindow < 500*time.Millisecond || res.SendWindow > max(res.Window, 500*time.Millisecond) {
		t.Fatalf("send window %v, window %v", res.SendWindow, res.Window)
	}
}

func TestClosedInterrupt(t *testing.T) {
	cmds, n := pingCommands(t)
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) {
		if k > 100 {
			return nil, false // stop answering
		}
		return drivertest.Pong, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := Run(ctx, srv.Dial(t, 2, 0), Config{
		Requests: 1 << 30, NewCommands: cmds, InterruptDrain: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || !res.Counts.Balanced() || res.Counts.Timeouts == 0 {
		t.Fatalf("interrupted %v counts %+v", res.Interrupted, res.Counts)
	}
}
