package serverinfo

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tcp(addr string) conn.Options { return conn.Options{Network: "tcp", Addr: addr} }

// load sends n commands args over one connection and reads their replies.
func load(t *testing.T, o conn.Options, n int, args ...string) {
	t.Helper()
	cmds := make([][]string, n)
	for i := range cmds {
		cmds[i] = args
	}
	o.SkipProbe = true // only the commands given
	answers, err := conn.DoAll(context.Background(), o, cmds...)
	if err != nil || len(answers) != n {
		t.Fatalf("%v ×%d: %d answers, %v", args, n, len(answers), err)
	}
}

// TestRefusedInfoIsSaidOnceAndNotAskedAgain: a managed service that
// renamed INFO and CONFIG: the identity says so, one notice, and the
// tests' snapshots do not ask again.
func TestRefusedInfoIsSaidOnceAndNotAskedAgain(t *testing.T) {
	srv := hostile.Start(t, hostile.Serve(func(args []string) string {
		if strings.EqualFold(args[0], "INFO") || strings.EqualFold(args[0], "CONFIG") {
			return "-ERR unknown command '" + args[0] + "', with args beginning with: \r\n"
		}
		return "+OK\r\n"
	}))
	p := New(tcp(srv.Addr))
	ctx := context.Background()
	id := p.Identify(ctx)
	if id.Available || !strings.Contains(id.Error, "INFO refused: ERR unknown command 'INFO'") ||
		!strings.Contains(id.ConfigRefused, "unknown command 'CONFIG'") || len(id.Config) != 0 {
		t.Fatalf("identity %+v", id)
	}
	notices := p.Notice()
	if len(notices) != 1 || !strings.Contains(notices[0], "refuses INFO") {
		t.Fatalf("notices %q, want one about INFO", notices)
	}
	asked := srv.Commands()
	for range 3 {
		st := p.Since(ctx, p.Before(ctx))
		if st.Available || !strings.Contains(st.Error, "INFO refused") || st.Commands == nil {
			t.Fatalf("stats %+v", st)
		}
	}
	if srv.Commands() != asked {
		t.Fatalf("asked %d more commands after INFO was refused", srv.Commands()-asked)
	}
	if n := p.Notice(); len(n) != 0 {
		t.Fatalf("said again: %q", n)
	}
}

// TestRefusedLatencyHistogram: a server before Redis 7 answers INFO but
// not LATENCY HISTOGRAM: the times are there, the histograms null, and
// LATENCY is asked once.
func TestRefusedLatencyHistogram(t *testing.T) {
	var calls atomic.Uint64
	var latency atomic.Int64
	srv := hostile.Start(t, hostile.Serve(func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "INFO":
			if len(args) > 1 && strings.EqualFold(args[1], "cpu") {
				return "$0\r\n\r\n" // a server that says nothing of its CPU
			}
			n := calls.Add(100) - 100
			body := "# Commandstats\r\ncmdstat_get:calls=" + strconv.FormatUint(n, 10) + ",usec=" + strconv.FormatUint(2*n, 10) + ",usec_per_call=2.00\r\n"
			return "$" + strconv.Itoa(len(body)) + "\r\n" + body + "\r\n"
		case "LATENCY":
			latency.Add(1)
			return "-ERR Unknown subcommand or wrong number of arguments for 'HISTOGRAM'. Try LATENCY HELP.\r\n"
		}
		return "+OK\r\n"
	}))
	p := New(tcp(srv.Addr))
	ctx := context.Background()
	for range 2 {
		st := p.Since(ctx, p.Before(ctx))
		get := st.Commands["get"]
		if !st.Available || get.Calls != 100 || get.Usec != 200 || get.LatencyHistogram != nil {
			t.Fatalf("stats %+v, get %+v", st, get)
		}
	}
	if n := latency.Load(); n != 1 {
		t.Fatalf("LATENCY HISTOGRAM asked %d times, want once", n)
	}
	if n := p.Notice(); len(n) != 0 {
		t.Fatalf("a missing LATENCY HISTOGRAM is not worth a notice: %q", n)
	}
}

// TestStalledServerIsBounded: a server that never answers delays a test's
// start or end by at most the timeout, and a cancelled context at once.
func TestStalledServerIsBounded(t *testing.T) {
	srv := hostile.Start(t, hostile.Silent)
	p := New(tcp(srv.Addr))
	p.Timeout = 200 * time.Millisecond
	start := time.Now()
	id := p.Identify(context.Background())
	if id.Available || !strings.Contains(id.Error, "no reply within 200ms") {
		t.Fatalf("identity %+v", id)
	}
	st := p.Since(context.Background(), p.Before(context.Background()))
	if st.Available || st.Error == "" {
		t.Fatalf("stats %+v", st)
	}
	// Generous: the bound is three timeouts; a hang would be minutes.
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %v", d)
	}
	if n := p.Notice(); len(n) != 1 || !strings.Contains(n[0], "did not answer INFO 2 times in a row") {
		t.Fatalf("notices %q", n)
	}
	// Given up: asked no more, at once.
	asked := srv.Commands()
	if st := p.Since(context.Background(), p.Before(context.Background())); st.Available || srv.Commands() != asked {
		t.Fatalf("after giving up: %+v, %d more commands", st, srv.Commands()-asked)
	}

	p = New(tcp(srv.Addr))
	p.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if id := p.Identify(ctx); id.Available || !strings.Contains(id.Error, "canceled") {
		t.Fatalf("cancelled: %+v", id)
	}
	if st := p.Since(ctx, &Snapshot{snap: &snapshot{}}); st.Available || !strings.Contains(st.Error, "canceled") {
		t.Fatalf("after cancel: %+v", st)
	}
}

// TestEmbeddedTarget: the embedded target answers everything this needs.
func TestEmbeddedTarget(t *testing.T) {
	srv, err := embedded.Start(embedded.Config{Faults: embedded.Faults{Delay: embedded.Delay{Kind: embedded.DelayFixed, A: 300 * time.Microsecond}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := tcp(srv.Addr())
	p := New(o)
	ctx := context.Background()
	id := p.Identify(ctx)
	if !id.Available || id.Name != "pacer-embedded" || id.Error != "" || id.Keys == nil || *id.Keys != 0 ||
		id.Config["appendonly"] != "no" || id.Config["io-threads"] != "1" || id.Config["maxmemory-policy"] != "noeviction" {
		t.Fatalf("identity %+v", id)
	}
	if _, ok := id.Config["save"]; !ok {
		t.Fatalf("no save in %v", id.Config)
	}
	before := p.Before(ctx)
	load(t, o, 50, "SET", "k", "v")
	st := p.Since(ctx, before)
	set := st.Commands["set"]
	if !st.Available || set.Calls != 50 || len(st.Commands) != 1 || st.Keys == nil || *st.Keys != 1 {
		t.Fatalf("stats %+v", st)
	}
	// 300 µs of delay each: the 512 µs bucket, and at least 300 µs a call.
	if set.UsecPerCall < 300 || set.LatencyHistogram == nil || set.LatencyHistogram.Calls != 50 || set.LatencyHistogram.P50 != 512 {
		t.Fatalf("set %+v %+v", set, set.LatencyHistogram)
	}
}

// TestRealRedis: against redis-server, the identity, and a test's calls
// exactly, with the LATENCY HISTOGRAM of Redis 7.
func TestRealRedis(t *testing.T) {
	srv := redistest.Start(t)
	o := tcp(srv.Addr)
	p := New(o)
	ctx := context.Background()
	id := p.Identify(ctx)
	if !id.Available || id.Name != "redis" || id.Version == "" || id.Mode != "standalone" || id.Error != "" {
		t.Fatalf("identity %+v", id)
	}
	for _, name := range []string{"save", "appendonly", "io-threads", "maxmemory-policy"} {
		if _, ok := id.Config[name]; !ok {
			t.Fatalf("no %s in %v", name, id.Config)
		}
	}
	load(t, o, 10, "SET", "a", "1")
	before := p.Before(ctx)
	load(t, o, 300, "GET", "a")
	load(t, o, 7, "INCR", "n")
	st := p.Since(ctx, before)
	get := st.Commands["get"]
	if !st.Available || get.Calls != 300 || st.Commands["incr"].Calls != 7 || len(st.Commands) != 2 {
		t.Fatalf("stats %+v", st)
	}
	if st.Keys == nil || *st.Keys != 2 {
		t.Fatalf("keys %v", st.Keys)
	}
	if !strings.HasPrefix(id.RedisVersion, "6.") {
		if h := get.LatencyHistogram; h == nil || h.Calls != 300 || h.P99 == 0 {
			t.Fatalf("Redis %s: histogram %+v", id.RedisVersion, h)
		}
	}
}

// TestRealRedisLatencyEventsAndCPU: a real server says its process id,
// its CPU time over a test, and, with its latency monitor on (the test's
// own server: pacer never sets it), the events dated within the test.
func TestRealRedisLatencyEventsAndCPU(t *testing.T) {
	testrun.SkipShort(t, "waits 2 s for the latency monitor's clock")
	srv := redistest.Start(t, "--latency-monitor-threshold", "20", "--enable-debug-command", "yes")
	o := tcp(srv.Addr)
	p := New(o)
	ctx := context.Background()
	id := p.Identify(ctx)
	if id.ProcessID <= 0 || id.LatencyMonitorMs == nil || *id.LatencyMonitorMs != 20 {
		t.Fatalf("identity: process_id %d, latency monitor %v", id.ProcessID, id.LatencyMonitorMs)
	}
	load(t, o, 1, "DEBUG", "SLEEP", "0.03") // before the test: not its event
	time.Sleep(2100 * time.Millisecond)     // the monitor's clock is whole seconds, and a test counts from the second before it
	before := p.Before(ctx)
	load(t, o, 2000, "SET", "a", "1")
	load(t, o, 1, "DEBUG", "SLEEP", "0.05")
	st := p.Since(ctx, before)
	if st.CPU == nil || st.CPU.UserS+st.CPU.SysS <= 0 {
		t.Fatalf("cpu %+v", st.CPU)
	}
	w, ok := st.Worst()
	if !ok || w.Event != "command" || w.Ms < 50 || len(st.LatencyEvents) != 1 {
		t.Fatalf("events %+v", st.LatencyEvents)
	}
	if !strings.Contains(w.String(), "command 5") {
		t.Fatalf("event words %q", w.String())
	}
	// Without the monitor nothing is asked.
	off := redistest.Start(t, "--enable-debug-command", "yes")
	po := New(tcp(off.Addr))
	if id := po.Identify(ctx); id.LatencyMonitorMs == nil || *id.LatencyMonitorMs != 0 {
		t.Fatalf("monitor off: %+v", id.LatencyMonitorMs)
	}
	b := po.Before(ctx)
	load(t, tcp(off.Addr), 1, "DEBUG", "SLEEP", "0.03")
	if st := po.Since(ctx, b); len(st.LatencyEvents) != 0 || st.CPU == nil {
		t.Fatalf("monitor off: %+v", st)
	}
}

// TestRealRedisWithPassword: the queries authenticate as the load does,
// and their AUTH is not the workload's.
func TestRealRedisWithPassword(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "s3cret")
	o := tcp(srv.Addr)
	o.Password = "s3cret"
	p := New(o)
	ctx := context.Background()
	if id := p.Identify(ctx); !id.Available {
		t.Fatalf("identity %+v", id)
	}
	before := p.Before(ctx)
	load(t, o, 5, "PING")
	st := p.Since(ctx, before)
	// The load's own connection sent one AUTH: it stays.
	if st.Commands["ping"].Calls != 5 || st.Commands["auth"].Calls != 1 {
		t.Fatalf("stats %+v", st.Commands)
	}
	bad := o
	bad.Password = "hunter22"
	id := New(bad).Identify(ctx)
	if id.Available || strings.Contains(id.Error, "hunter22") || !strings.Contains(id.Error, "WRONGPASS") {
		t.Fatalf("wrong password: %+v", id)
	}
}
