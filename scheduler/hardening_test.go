package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/testrun"
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
			res := runOpen(t, dial(t, srv.Addr, conns, 0), stream(t, "ping_inline", 1), OpenConfig{
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
	res := runOpen(t, dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), OpenConfig{
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
	res = runOpen(t, dial(t, silent.Addr, 2, 0), stream(t, "ping_inline", 1), OpenConfig{
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
	cmds, n := pingStream(t)
	srv := newFakeServer(t, n, func(k int) ([]byte, bool) { return pong, k == 20 })
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, srv.dial(t, 2, 0), cmds, OpenConfig{
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
		return conn.Dial(context.Background(), conn.Options{Addr: srv.Addr, SkipProbe: true, Now: Now})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled atomic.Int64
	go func() { // Ctrl-C once a redial is stuck (a loaded machine takes its time to get there)
		select {
		case <-dialing:
		case <-time.After(10 * time.Second):
		}
		cancelled.Store(Now())
		cancel()
	}()
	rate := timeline.RatePerSecond(1000)
	res, err := RunOpen(ctx, dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), OpenConfig{
		Timeline: timeline.Uniform{Rate: rate}, Duration: time.Minute, Redial: stuck,
	})
	took := time.Duration(Now() - cancelled.Load())
	if err != nil {
		t.Fatal(err)
	}
	if dials.Load() == 0 {
		t.Fatal("no redial was under way: the test shows nothing")
	}
	if !res.Interrupted || took > DefaultInterruptDrain+time.Second {
		t.Fatalf("interrupted %v, returned %v after the cancel: want within the %v drain", res.Interrupted, took, DefaultInterruptDrain)
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
		if len(codes) > MaxErrorCodes+1 || codes[OtherErrors] == 0 || sum != errs {
			t.Fatalf("%s: %d codes (other %d), summing to %d of %d errors", mode, len(codes), codes[OtherErrors], sum, errs)
		}
	}
	rate := timeline.RatePerSecond(5000)
	res := runOpen(t, dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), OpenConfig{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 500, CommandNames: []string{"PING", "unused"},
	})
	check("open", res.ErrorCodes, res.Counts.Errors)
	check("open, per command", res.Commands[0].ErrorCodes, res.Commands[0].Counts.Errors)
}

func TestTrimCodes(t *testing.T) {
	m := map[string]uint64{OtherErrors: 5}
	for i := range 30 {
		m[string(rune('A'+i))] = uint64(100 - i) // A most frequent
	}
	got := TrimCodes(m)
	if len(got) != MaxErrorCodes+1 || got["A"] != 100 || got["T"] != 81 || got["U"] != 0 {
		t.Fatalf("trimmed to %v", got)
	}
	// U..^ (10 codes, 80 down to 71) and the 5 already other.
	if got[OtherErrors] != 5+(80+71)*10/2 {
		t.Fatalf("other = %d", got[OtherErrors])
	}
	per := map[string]uint64{}
	for i := range 100 {
		AddCode(per, []byte{byte(i)}, 1)
	}
	if len(per) > maxCodesPerConn || per[OtherErrors] != 100-(maxCodesPerConn-1) {
		t.Fatalf("a connection's tally holds %d codes, other %d", len(per), per[OtherErrors])
	}
}

func TestErrorText(t *testing.T) {
	long := strings.Repeat("é", MaxErrorText) // 2 bytes each
	if got := ErrorText([]byte(long)); len(got) > MaxErrorText || !strings.HasPrefix(long, got) || len(got) < MaxErrorText-1 {
		t.Fatalf("kept %d bytes, cut inside a character or too short", len(got))
	}
	if got := ErrorText([]byte("ERR x")); got != "ERR x" {
		t.Fatalf("short text changed to %q", got)
	}
}

// TestOpenSumsUnsolicitedOverConnections: Result.Unsolicited adds up what
// every connection of the test counted, the retired ones too.
func TestOpenSumsUnsolicitedOverConnections(t *testing.T) {
	srv := hostile.Start(t, hostile.UnsolicitedFirst)
	rate := timeline.RatePerSecond(1000)
	res := runOpen(t, dial(t, srv.Addr, 3, 0), stream(t, "ping_inline", 1), OpenConfig{
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
	res, err := RunOpen(context.Background(), noClock(2), stream(t, "ping_inline", 1), OpenConfig{
		Timeline: timeline.Uniform{Rate: rate}, Requests: 100,
	})
	if !errors.Is(err, ErrBadClock) || res.ClockErrors != 100 || !strings.Contains(err.Error(), "100 requests") {
		t.Fatalf("open: err %v, %d clock errors: want ErrBadClock naming 100", err, res.ClockErrors)
	}
}

// TestLargeMixesCostCountsNotHistograms: a mix of 1000 templates allocated
// three 270 KB recorders per command (about 0.8 GB). Above
// MaxTimedCommands, commands keep counts only.
func TestLargeMixesCostCountsNotHistograms(t *testing.T) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("cmd%d", i)
	}
	var ks []CommandStats
	if grew := testrun.Allocated(func() { ks = NewCommandStats(names, true) }); grew > 1<<20 {
		t.Fatalf("%d commands allocated %d bytes of per-command stats, want under 1 MiB", len(names), grew)
	}
	tallies := [][]CommandTally{make([]CommandTally, len(names))}
	tallies[0][7].Completed = 5
	res := CommandResults(names, ks, tallies)
	if len(res) != 1000 || res[7].Counts.Completed != 5 || res[7].Response != nil {
		t.Fatalf("command 7: %+v, want counts without histograms", res[7])
	}
	if small := NewCommandStats(names[:MaxTimedCommands], true); !Timed(small) || small[0].Lag == nil {
		t.Fatal("a mix of MaxTimedCommands commands lost its histograms")
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
	res, err := RunOpen(ctx, dial(t, srv.Addr, 2, 0), stream(t, "ping_inline", 1), OpenConfig{
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
	var live *Live
	res := runOpen(t, dial(t, srv.Addr, 3, 0), stream(t, "ping_inline", 1), OpenConfig{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(2000)}, Requests: 200,
		OnStart: func(l *Live) { live = l },
	})
	p := live.Progress()
	if p.Sent != res.Counts.Sent || p.Completed != res.Counts.Completed || p.InFlight != 0 {
		t.Fatalf("last progress sent %d completed %d in flight %d; result %+v", p.Sent, p.Completed, p.InFlight, res.Counts)
	}
}

// TestMergeErrorCodesStaysTrimmed: results merged across bench -l loops
// keep the top MaxErrorCodes and OtherErrors, with the total unchanged.
func TestMergeErrorCodesStaysTrimmed(t *testing.T) {
	var sum map[string]uint64
	for loop := range 10 {
		m := map[string]uint64{}
		for i := range MaxErrorCodes {
			m[fmt.Sprintf("E%d-%d", loop, i)] = 1
		}
		sum = mergeErrorCodes(sum, m)
	}
	total := uint64(0)
	for _, v := range sum {
		total += v
	}
	if len(sum) > MaxErrorCodes+1 || total != 10*MaxErrorCodes || sum[OtherErrors] == 0 {
		t.Fatalf("merged to %d codes summing to %d (other %d)", len(sum), total, sum[OtherErrors])
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
	conns[0] = dial(t, srv.Addr, 1, 0)[0]
	rate := timeline.RatePerSecond(100)
	if _, err := RunOpen(context.Background(), conns, stream(t, "ping_inline", 1), OpenConfig{
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
