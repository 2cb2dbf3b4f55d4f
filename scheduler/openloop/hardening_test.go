package openloop

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
	"github.com/pacer-load/pacer/timeline"
)

// Regression tests of the second hardening round: each names
// the reproduction it guards.

// TestRedialBacksOffWhenReplacementsNeverServe: a server that accepts and
// at once closes (or refuses with maxclients, with no handshake to notice
// it) gave 28,485 reconnects in 5 s. Every redial waits the slot's
// backoff, which only a completed request resets: over 2 s a slot can
// redial at most about 8 times (10+20+…+640 ms, then 1 s).
func TestRedialBacksOffWhenReplacementsNeverServe(t *testing.T) {
	testrun.SkipShort(t, "waits out redial back-offs for seconds")
	for name, b := range map[string]hostile.Behaviour{"accept-close": hostile.AcceptClose, "maxclients": hostile.MaxClients} {
		t.Run(name, func(t *testing.T) {
			srv := hostile.Start(t, b)
			rate := timeline.RatePerSecond(1000)
			const conns = 4
			res := runOpen(t, drivertest.Dial(t, srv.Addr, conns, 0), stream(t, "ping_inline", 1), Config{
				Timeline: timeline.Uniform{Rate: rate}, Duration: 2 * time.Second, Redial: redialTo(srv.Addr),
				Drain: 100 * time.Millisecond,
			})
			t.Logf("%d reconnects, %d accepted, counts %+v, first error %q", res.Reconnects, srv.Accepted(), res.Counts, res.FirstError)
			if limit := uint64(conns * 10); res.Reconnects > limit {
				t.Fatalf("%d reconnects in 2 s over %d connections, want at most %d with backoff", res.Reconnects, conns, limit)
			}
			// The facts of a lost target (verdict.Judge's target_lost): nothing
			// completed, and the first error says why.
			if res.Counts.Completed != 0 || res.FirstError == "" {
				t.Fatalf("counts %+v, first error %q: want nothing completed and the first error kept", res.Counts, res.FirstError)
			}
		})
	}
}

func TestNextBackoff(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{0, MinRedialBackoff},                            // a fresh slot starts at the minimum
		{MinRedialBackoff, 2 * MinRedialBackoff},         // doubles
		{640 * time.Millisecond, MaxRedialBackoff},       // 1.28 s is capped
		{MaxRedialBackoff, MaxRedialBackoff},             // and stays there
		{time.Millisecond, 10 * time.Millisecond},        // never below the minimum
		{500 * time.Millisecond, MaxRedialBackoff},       // exactly the cap
		{300 * time.Millisecond, 600 * time.Millisecond}, // below it
	}
	for _, tc := range tests {
		if got := nextBackoff(tc.in); got != tc.want {
			t.Errorf("nextBackoff(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestNothingCompletedIsTargetLost: 100% of requests failing (error
// replies, timeouts) exited 0 with verdict ok.
func TestNothingCompletedIsTargetLost(t *testing.T) {
	t.Parallel()
	const text = "ERR unknown command 'PING', with args beginning with: "
	srv := hostile.Start(t, hostile.Answer("-"+text+"\r\n"))
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 100,
	})
	if res.Counts.Errors != 100 || res.Counts.Completed != 0 {
		t.Fatalf("open: counts %+v: want 100 errors, nothing completed", res.Counts)
	}
	// The first error keeps its whole text, not only its code.
	if res.FirstError != text {
		t.Fatalf("first error %q, want %q", res.FirstError, text)
	}

	// A server that never answers: every request a timeout.
	silent := hostile.Start(t, hostile.Silent)
	res = runOpen(t, drivertest.Dial(t, silent.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 50, Drain: 100 * time.Millisecond,
	})
	if res.Counts.Timeouts != 50 || res.Counts.Completed != 0 {
		t.Fatalf("silent: counts %+v: want 50 timeouts", res.Counts)
	}
}

// TestEveryConnectionGoneAtTheEndIsTargetLost: requests completed early,
// then every connection died and none came back.
func TestEveryConnectionGoneAtTheEndIsTargetLost(t *testing.T) {
	t.Parallel()
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(k int) ([]byte, bool) { return drivertest.Pong, k == 20 })
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, srv.Dial(t, 2, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: rate}, Duration: 500 * time.Millisecond,
		Redial: func(context.Context) (*conn.Conn, error) { return nil, errors.New("connection refused") },
	})
	if res.Counts.Completed == 0 || !res.TargetGone {
		t.Fatalf("counts %+v, target gone %v: want some completed, then every connection gone", res.Counts, res.TargetGone)
	}
}

// TestInterruptNeverWaitsForADial: a stuck reconnect added up to 5 s to
// Ctrl-C. The run must end within the interrupt drain even when a Redial
// ignores its context.
func TestInterruptNeverWaitsForADial(t *testing.T) {
	srv := hostile.Start(t, hostile.AcceptClose)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var dials atomic.Int64
	dialing := make(chan struct{}, 1)
	stuck := func(ctx context.Context) (*conn.Conn, error) {
		dials.Add(1)
		select {
		case dialing <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
		return conn.Dial(context.Background(), conn.Options{Addr: srv.Addr, SkipProbe: true, Now: scheduler.Now})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled atomic.Int64
	go func() { // Ctrl-C once a redial is stuck (a loaded machine takes its time to get there)
		select {
		case <-dialing:
		case <-time.After(10 * time.Second):
		}
		cancelled.Store(scheduler.Now())
		cancel()
	}()
	rate := timeline.RatePerSecond(1000)
	res, err := Run(ctx, drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Duration: time.Minute, Redial: stuck,
	})
	took := time.Duration(scheduler.Now() - cancelled.Load())
	if err != nil {
		t.Fatal(err)
	}
	if dials.Load() == 0 {
		t.Fatal("no redial was under way: the test shows nothing")
	}
	if !res.Interrupted || took > scheduler.DefaultInterruptDrain+time.Second {
		t.Fatalf("interrupted %v, returned %v after the cancel: want within the %v drain", res.Interrupted, took, scheduler.DefaultInterruptDrain)
	}
}

// TestErrorCodesAreBounded: 600k distinct codes gave 157 MB RSS and an
// 18 MB JSON. A test keeps the top MaxErrorCodes and OtherErrors.
func TestErrorCodesAreBounded(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.DistinctErrors())
	check := func(mode string, codes map[string]uint64, errs uint64) {
		t.Helper()
		sum := uint64(0)
		for _, n := range codes {
			sum += n
		}
		if len(codes) > scheduler.MaxErrorCodes+1 || codes[scheduler.OtherErrors] == 0 || sum != errs {
			t.Fatalf("%s: %d codes (other %d), summing to %d of %d errors", mode, len(codes), codes[scheduler.OtherErrors], sum, errs)
		}
	}
	rate := timeline.RatePerSecond(5000)
	res := runOpen(t, drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 500, CommandNames: []string{"PING", "unused"},
	})
	check("open", res.ErrorCodes, res.Counts.Errors)
	check("open, per command", res.Commands[0].ErrorCodes, res.Commands[0].Counts.Errors)
}

// TestOpenSumsUnsolicitedOverConnections: Result.Unsolicited adds up what
// every connection of the test counted, the retired ones too.
func TestOpenSumsUnsolicitedOverConnections(t *testing.T) {
	srv := hostile.Start(t, hostile.UnsolicitedFirst)
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, drivertest.Dial(t, srv.Addr, 3, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 100,
	})
	if res.Unsolicited != 3 || res.Counts.Completed != 100 {
		t.Fatalf("unsolicited %d, counts %+v: want one per connection, all completed", res.Unsolicited, res.Counts)
	}
}

// TestZeroClockFailsTheRun: connections whose clock reads 0 (before conn
// defaulted to the monotonic clock, every connection built without Now did)
// time every reply at 0; the latencies were recorded as 0 silently. The
// open driver counts them and fails (closedloop's test of the same name
// checks the closed loop).
func TestZeroClockFailsTheRun(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	noClock := func(n int) []*conn.Conn {
		conns, err := conn.DialAll(context.Background(), conn.Options{Addr: srv.Addr, SkipProbe: true,
			Now: func() int64 { return 0 }}, n)
		if err != nil {
			t.Fatal(err)
		}
		return conns
	}
	rate := timeline.RatePerSecond(2000)
	res, err := Run(context.Background(), noClock(2), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 100,
	})
	if !errors.Is(err, scheduler.ErrBadClock) || res.ClockErrors != 100 || !strings.Contains(err.Error(), "100 requests") {
		t.Fatalf("open: err %v, %d clock errors: want ErrBadClock naming 100", err, res.ClockErrors)
	}
}

// TestInterruptDuringTheDrainCutsIt: Ctrl-C after the timeline ended
// waited out the whole --drain (58.6 s with --drain 60s); it now cuts the
// drain to InterruptDrain and marks the result interrupted.
func TestInterruptDuringTheDrainCutsIt(t *testing.T) {
	srv := hostile.Start(t, hostile.Silent)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rate := timeline.RatePerSecond(1000)
	start := time.Now()
	// The timeline lasts 100 ms; the interrupt comes 300 ms into a 60 s drain.
	time.AfterFunc(400*time.Millisecond, cancel)
	res, err := Run(ctx, drivertest.Dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Duration: 100 * time.Millisecond,
		Drain: time.Minute, InterruptDrain: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second || !res.Interrupted || res.Counts.Timeouts != res.Counts.Scheduled {
		t.Fatalf("took %v, interrupted %v, counts %+v: want the drain cut, the run interrupted, every request a timeout",
			took, res.Interrupted, res.Counts)
	}
}

// TestLastProgressMatchesResult: after the run, a progress reading counts
// each sent request once. finish used to move a connection's writes into
// the slot's retired count while the slot still showed the connection, so
// the last progress line reported twice what was sent.
func TestLastProgressMatchesResult(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	var live *scheduler.Live
	res := runOpen(t, drivertest.Dial(t, srv.Addr, 3, 0), stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(2000)}, Requests: 200,
		OnStart: func(l *scheduler.Live) { live = l },
	})
	p := live.Progress()
	if p.Sent != res.Counts.Sent || p.Completed != res.Counts.Completed || p.InFlight != 0 {
		t.Fatalf("last progress sent %d completed %d in flight %d; result %+v", p.Sent, p.Completed, p.InFlight, res.Counts)
	}
}

// TestRedialsAreBounded: -c 2000 against maxclients 100 left 1900 slots
// redialing at once (413 MB peak, bench/bounds): at most
// MaxConcurrentRedials redials are in progress at any moment.
func TestRedialsAreBounded(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.OK)
	var now, peak, calls atomic.Int64
	refused := func(ctx context.Context) (*conn.Conn, error) {
		n := now.Add(1)
		defer now.Add(-1)
		calls.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select { // a dial that takes a while, as a refused handshake does
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
		return nil, errors.New("refused")
	}
	conns := make([]*conn.Conn, 300) // one live connection, 299 to redial
	conns[0] = drivertest.Dial(t, srv.Addr, 1, 0)[0]
	rate := timeline.RatePerSecond(100)
	if _, err := Run(context.Background(), conns, stream(t, "ping_inline", 1), Config{
		Timeline: timeline.Uniform{Rate: rate}, Duration: 300 * time.Millisecond, Redial: refused, Drain: 50 * time.Millisecond,
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d redials, at most %d at once", calls.Load(), peak.Load())
	if calls.Load() < MaxConcurrentRedials {
		t.Fatalf("only %d redials: the test shows nothing", calls.Load())
	}
	if peak.Load() > MaxConcurrentRedials {
		t.Fatalf("%d redials at once, want at most %d", peak.Load(), MaxConcurrentRedials)
	}
}
