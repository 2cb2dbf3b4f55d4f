package scheduler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
)

func closedCommands(t *testing.T, title string, o scenarios.Options) func(int) Commands {
	tests, err := scenarios.Select(title)
	if err != nil {
		t.Fatal(err)
	}
	return func(i int) Commands {
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
		res, err := RunClosed(context.Background(), dial(t, srv.Addr, 7, 0), ClosedConfig{
			Name: "SET", Requests: 1001, Pipeline: p,
			Commands: closedCommands(t, "set", scenarios.Options{Sizes: scenarios.FixedSize(3), Keyspace: 100}),
		})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Counts
		if c.Scheduled != 1001 || c.Sent != 1001 || c.Completed != 1001 || !c.Balanced() {
			t.Fatalf("-P %d: counts %+v", p, c)
		}
		if got := commandCalls(t, srv, "set"); got != 1001 {
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

func TestClosedFirstReplyVersusPerReply(t *testing.T) {
	srv := redistest.Start(t)
	// LRANGE_600 replies are big enough that a pipeline of 50 arrives in
	// many reads: per-reply latencies spread, first-reply ones do not.
	if _, err := srv.Do("RPUSH", "mylist", "a"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		args := []string{"RPUSH", "mylist"}
		for j := 0; j < 100; j++ {
			args = append(args, "xxxxxxxxxxxxxxxxxxxx")
		}
		if _, err := srv.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	cmds := func(int) Commands {
		tpl, _ := scenarios.Compile("LRANGE", []string{"LRANGE", "mylist", "0", "599"}, scenarios.Options{})
		return scenarios.NewStream(tpl, 1)
	}
	first, err := RunClosed(context.Background(), dial(t, srv.Addr, 1, 0), ClosedConfig{Requests: 500, Pipeline: 50, Commands: cmds})
	if err != nil {
		t.Fatal(err)
	}
	per, err := RunClosed(context.Background(), dial(t, srv.Addr, 1, 0), ClosedConfig{Requests: 500, Pipeline: 50, Commands: cmds, Latency: PerReply})
	if err != nil {
		t.Fatal(err)
	}
	// First-reply: 10 batches, each one value recorded 50 times.
	if n := nonEmpty(first.Response.Export().Counts); n > 10 {
		t.Fatalf("first-reply latency has %d distinct buckets, want at most one per batch", n)
	}
	if per.Response.Max() <= first.Response.Max() {
		t.Fatalf("per-reply max %d not above first-reply max %d", per.Response.Max(), first.Response.Max())
	}
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
func pingCommands(t *testing.T) (func(int) Commands, int) {
	_, n := pingStream(t)
	return func(int) Commands { s, _ := pingStream(t); return s }, n
}

func TestClosedErrorReplyEndsTheRunUnlessContinuing(t *testing.T) {
	srv := redistest.Start(t)
	if _, err := srv.Do("SET", "str", "x"); err != nil {
		t.Fatal(err)
	}
	cmds := func(int) Commands {
		tpl, _ := scenarios.Compile("LPUSH str", []string{"LPUSH", "str", "a"}, scenarios.Options{})
		return scenarios.NewStream(tpl, 1)
	}
	res, err := RunClosed(context.Background(), dial(t, srv.Addr, 2, 0), ClosedConfig{Requests: 1000, Commands: cmds})
	var er *ErrorReply
	if !errors.As(err, &er) || er.Error() != "Error from server: WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("err %v", err)
	}
	if !res.Counts.Balanced() || res.Counts.Errors == 0 || res.Counts.Unsent == 0 {
		t.Fatalf("counts %+v: the run should stop early with every request accounted", res.Counts)
	}
	var shown atomic.Int64
	res, err = RunClosed(context.Background(), dial(t, srv.Addr, 2, 0), ClosedConfig{
		Requests: 300, Commands: cmds, ContinueOnError: true,
		OnErrorReply: func([]byte) { shown.Add(1) },
	})
	if err != nil || res.Counts.Errors != 300 || res.ErrorCodes["WRONGTYPE"] != 300 || shown.Load() != 300 {
		t.Fatalf("continuing: err %v counts %+v codes %v shown %d", err, res.Counts, res.ErrorCodes, shown.Load())
	}
}

func TestClosedLostConnectionFails(t *testing.T) {
	cmds, n := pingCommands(t)
	srv := newFakeServer(t, n, func(k int) ([]byte, bool) { return pong, k == 50 })
	res, err := RunClosed(context.Background(), srv.dial(t, 1, 0), ClosedConfig{
		Requests: 1000, Commands: cmds,
	})
	var lost *ErrConnLost
	if !errors.As(err, &lost) || err.Error() != "Error: Server closed the connection" {
		t.Fatalf("err %v, want redis-benchmark's lost connection", err)
	}
	if !res.Counts.Balanced() || res.Counts.Completed != 50 || res.ErrorCodes[ErrConnectionLost] != 1 {
		t.Fatalf("counts %+v codes %v", res.Counts, res.ErrorCodes)
	}
}

func TestClosedKeepAliveOffReconnects(t *testing.T) {
	srv := redistest.Start(t)
	before, _ := srv.Info("stats")
	dials := atomic.Int64{}
	res, err := RunClosed(context.Background(), dial(t, srv.Addr, 2, 0), ClosedConfig{
		Requests: 40, Commands: closedCommands(t, "ping_mbulk", scenarios.Options{}),
		Reconnect: func(ctx context.Context) (*conn.Conn, error) {
			dials.Add(1)
			return conn.Dial(ctx, conn.Options{Addr: srv.Addr, Now: Now})
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
	rate := RatePerSecond(2000)
	start := time.Now()
	res, err := RunClosed(context.Background(), dial(t, srv.Addr, 4, 0), ClosedConfig{
		Requests: 1000, Rate: rate, Commands: closedCommands(t, "get", scenarios.Options{}),
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
}

func TestClosedInterrupt(t *testing.T) {
	cmds, n := pingCommands(t)
	srv := newFakeServer(t, n, func(k int) ([]byte, bool) {
		if k > 100 {
			return nil, false // stop answering
		}
		return pong, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := RunClosed(ctx, srv.dial(t, 2, 0), ClosedConfig{
		Requests: 1 << 30, Commands: cmds, InterruptDrain: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || !res.Counts.Balanced() || res.Counts.Timeouts == 0 {
		t.Fatalf("interrupted %v counts %+v", res.Interrupted, res.Counts)
	}
}
