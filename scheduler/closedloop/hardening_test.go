package closedloop

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
)

// Regression tests of the second hardening round, the closed loop's
// part: each names the reproduction it guards.

// TestNothingCompletedIsTargetLost: 100% of requests failing (error
// replies) exited 0 with verdict ok; the first error keeps its whole
// text, not only its code.
func TestNothingCompletedIsTargetLost(t *testing.T) {
	t.Parallel()
	const text = "ERR unknown command 'PING', with args beginning with: "
	srv := hostile.Start(t, hostile.Answer("-"+text+"\r\n"))
	cmds, _ := pingCommands(t)
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 2, 0), Config{
		Requests: 100, NewCommands: cmds, ContinueOnError: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Errors != 100 || res.Counts.Completed != 0 || res.FirstError != text {
		t.Fatalf("closed: counts %+v, first error %q", res.Counts, res.FirstError)
	}
}

// TestErrorCodesAreBounded: 600k distinct codes gave 157 MB RSS and an
// 18 MB JSON. A test keeps the top MaxErrorCodes and OtherErrors.
func TestErrorCodesAreBounded(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.DistinctErrors())
	cmds, _ := pingCommands(t)
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 2, 0), Config{
		Requests: 500, NewCommands: cmds, ContinueOnError: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := uint64(0)
	for _, n := range res.ErrorCodes {
		sum += n
	}
	if len(res.ErrorCodes) > scheduler.MaxErrorCodes+1 || res.ErrorCodes[scheduler.OtherErrors] == 0 || sum != res.Counts.Errors {
		t.Fatalf("closed: %d codes (other %d), summing to %d of %d errors", len(res.ErrorCodes), res.ErrorCodes[scheduler.OtherErrors], sum, res.Counts.Errors)
	}
}

// TestZeroClockFailsTheRun: connections whose clock reads 0 time every
// reply at 0; the latencies were recorded as 0 silently. The closed loop
// counts them and fails.
func TestZeroClockFailsTheRun(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	conns, err := conn.DialAll(context.Background(), conn.Options{Addr: srv.Addr, SkipProbe: true,
		Now: func() int64 { return 0 }}, 2)
	if err != nil {
		t.Fatal(err)
	}
	cmds, _ := pingCommands(t)
	res, err := Run(context.Background(), conns, Config{Requests: 100, NewCommands: cmds})
	if !errors.Is(err, scheduler.ErrBadClock) || res.ClockErrors != 100 || !strings.Contains(err.Error(), "100 requests") {
		t.Fatalf("closed: err %v, %d clock errors: want ErrBadClock naming 100", err, res.ClockErrors)
	}
}

// TestOnIntegerSeesIntegerReplies: the value of every measured integer
// reply reaches OnInteger (PUBLISH's receivers).
func TestOnIntegerSeesIntegerReplies(t *testing.T) {
	t.Parallel()
	s := drivertest.NewServer(t, 14, func(k int) ([]byte, bool) {
		if k%2 == 0 {
			return []byte(":-3\r\n"), false
		}
		return []byte(":10\r\n"), false
	})
	var sum, n atomic.Int64
	on := func(v int64) { sum.Add(v); n.Add(1) }
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	cres, err := Run(context.Background(), s.Dial(t, 1, 0), Config{Requests: 40, NewCommands: func(int) scheduler.Commands { return scheduler.Fixed(ping) }, HiccupInterval: -1, OnInteger: on})
	if err != nil || cres.Counts.Completed != 40 || n.Load() != 40 || sum.Load() != 20*7 {
		t.Fatalf("closed: %v, %d integers summing to %d", err, n.Load(), sum.Load())
	}
}

// TestClosedInterruptWithAStuckReconnect: Run read a worker's
// connection after the interrupt drain while the worker could still
// assign it (a data race under -race), and waited for the Reconnect.
func TestClosedInterruptWithAStuckReconnect(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var inDial atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	reconnect := func(context.Context) (*conn.Conn, error) {
		if inDial.Add(1) == 1 {
			cancel() // interrupt while this reconnect is stuck
		}
		select {
		case <-release:
		case <-time.After(3 * time.Second):
		}
		return conn.Dial(context.Background(), conn.Options{Addr: srv.Addr, SkipProbe: true, Now: scheduler.Now})
	}
	cmds, _ := pingCommands(t)
	start := time.Now()
	res, err := Run(ctx, drivertest.Dial(t, srv.Addr, 2, 0), Config{
		Requests: 1 << 30, NewCommands: cmds, Reconnect: reconnect, InterruptDrain: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if inDial.Load() == 0 {
		t.Fatal("no reconnect was under way: the test shows nothing")
	}
	if took := time.Since(start); !res.Interrupted || took > 2*time.Second || !res.Counts.Balanced() {
		t.Fatalf("interrupted %v after %v, counts %+v", res.Interrupted, took, res.Counts)
	}
}

// TestClosedDurationEndsWhenRepliesNeverCome: compare's closed run ignored
// --duration when no reply came. It ends at Duration + Drain, the
// requests in flight counted as timeouts at their age.
func TestClosedDurationEndsWhenRepliesNeverCome(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.Silent)
	cmds, _ := pingCommands(t)
	const duration, drain = 200 * time.Millisecond, 300 * time.Millisecond
	var res *scheduler.Result
	var err error
	testrun.Finishes(t, "a closed run against a silent server", func() {
		res, err = Run(context.Background(), drivertest.Dial(t, srv.Addr, 3, 0), Config{
			Duration: duration, Drain: drain, NewCommands: cmds, Pipeline: 4, ContinueOnError: true,
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if !c.Balanced() || c.Sent != 12 || c.Timeouts != 12 || c.Completed != 0 {
		t.Fatalf("counts %+v: want the 3 batches of 4 as timeouts, nothing completed", c)
	}
	// Written before Duration ended, given up on at Duration + Drain: each
	// waited at least the drain.
	if res.Response.TotalCount() != 12 || res.Response.Min() < int64(drain) {
		t.Fatalf("timeouts recorded %d times, the youngest at %v: want 12 at least %v old",
			res.Response.TotalCount(), time.Duration(res.Response.Min()), drain)
	}
}

// TestClosedCountsRepliesFromBeforeTheirBatch: a server answering every
// command twice in one write leaves a reply read before the next batch
// was written; it answers nothing and is counted, not matched.
func TestClosedCountsRepliesFromBeforeTheirBatch(t *testing.T) {
	srv := hostile.Start(t, hostile.DoubleReply)
	cmds, _ := pingCommands(t)
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 1, 0), Config{
		Requests: 100, NewCommands: cmds,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every batch but the last leaves its duplicate behind.
	if res.Counts.Completed != 100 || res.Unsolicited != 99 {
		t.Fatalf("completed %d, unsolicited %d: want 100 and 99", res.Counts.Completed, res.Unsolicited)
	}
}
