package main

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
)

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestSentinelFlagsRefused: the sentinel flags' misuses are usage errors.
func TestSentinelFlagsRefused(t *testing.T) {
	t.Parallel()
	s := closedAddr(t)
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--sentinel needs --master", []string{"run", "--sentinel", s, "--rate", "10", "-n", "1"}},
		{"--master needs --sentinel", []string{"run", "--master", "m", "--rate", "10", "-n", "1"}},
		{"--sentinel-pass needs --sentinel", []string{"bench", "--sentinel-pass", "x", "-n", "1"}},
		{"not a Redis Cluster", []string{"run", "--sentinel", s, "--master", "m", "--cluster", "--rate", "10", "-n", "1"}},
		{"give no -h, -p or -s", []string{"fill", "--sentinel", s, "--master", "m", "-p", "7000", "-r", "10"}},
		{"--sentinel: sentinel \"127.0.0.1:0\": want a port", []string{"run", "--sentinel", "127.0.0.1:0", "--master", "m", "--rate", "10", "-n", "1"}},
		{"--sentinel-user needs a password", []string{"run", "--sentinel", s, "--master", "m", "--sentinel-user", "w", "--rate", "10", "-n", "1"}},
		{"-u: no master name", []string{"run", "-u", "redis+sentinel://" + s, "--rate", "10", "-n", "1"}},
		{"--master: the redis+sentinel:// URI names the master", []string{"run", "-u", "redis+sentinel://" + s + "/m", "--master", "m", "--rate", "10", "-n", "1"}},
	} {
		wantUsageError(t, c.want, c.args...)
	}
}

// TestSentinelsAllDown: when no sentinel answers, every load command
// fails at once with one line naming each sentinel and why (exit 1), and
// never hangs.
func TestSentinelsAllDown(t *testing.T) {
	t.Parallel()
	a, b := closedAddr(t), closedAddr(t)
	for _, args := range [][]string{
		{"run", "--rate", "100", "-n", "10", "-t", "get"},
		{"bench", "-n", "10", "-t", "get", "-q"},
		{"fill", "-r", "10"},
		{"sweep", "--rates", "100", "--step-duration", "1s", "-t", "get"},
		{"compare", "--rate", "100", "--duration", "1s", "-t", "get"},
	} {
		start := time.Now()
		code, _, stderr := pacer(t, append(args, "--sentinel", a+","+b, "--master", "m")...)
		if code != exitFailed || !strings.Contains(stderr, `no sentinel answered for master "m"`) || !strings.Contains(stderr, a) || !strings.Contains(stderr, b) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 naming both sentinels", args[0], code, stderr)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s took %v with every sentinel down", args[0], d)
		}
	}
}

type failoverDoc struct {
	Tests []struct {
		StartedAt string         `json:"started_at"`
		Counts    countsJSON     `json:"counts"`
		Events    []report.Event `json:"events"`
		Intervals []struct {
			StartS float64 `json:"start_s"`
			Events []int   `json:"events"`
		} `json:"intervals"`
		Connections int `json:"connections"`
	} `json:"tests"`
}

type countsJSON struct {
	Scheduled, Sent, Completed, Errors, Timeouts, Unsent uint64
}

// TestRunFollowsSentinelFailover: pacer run through three sentinels
// while they fail the primary over. The run keeps its timeline and its
// counts (every request accounted for), follows the switch (the new
// primary serves the writes after it, the former one stops taking them
// within moments of it), and reports one failover event, on both
// primaries, whose write window lies within half a second of the span
// from the sentinels' +switch-master to the last write the former primary
// took (the acceptance of a 30 s run at 5k/s, shortened).
func TestRunFollowsSentinelFailover(t *testing.T) {
	testrun.SkipShort(t, "starts three servers and three sentinels, runs 8 s and fails over")
	testrun.SkipRace(t, "where the write window lies against the switch and the former primary's last write")
	t.Parallel()
	set := redistest.StartReplicated(t, 2)
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{})
	js := filepath.Join(t.TempDir(), "r.json")
	old := set.Primary
	watch := redistest.WatchWrites(old)
	type outcome struct {
		code           int
		stdout, stderr string
	}
	done := make(chan outcome, 1)
	go func() {
		code, stdout, stderr := pacer(t, "run", "--sentinel", strings.Join([]string{closedAddr(t), s.Addrs()}, ","), "--master", s.Master,
			"--rate", "2k", "-t", "set", "--duration", "8s", "--json", js)
		done <- outcome{code, stdout, stderr}
	}()
	time.Sleep(3 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := s.Failover(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := <-done
	last, lastCalls := watch.Stop()
	if !runOK(o.code) {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stderr, "(skipped)") {
		t.Errorf("the dead sentinel first in the list was not said to be skipped: %s", o.stderr)
	}
	if sw.From != old.Addr {
		t.Fatalf("switch from %s, want the primary %s", sw.From, old.Addr)
	}
	doc := readJSON[failoverDoc](t, js)
	if len(doc.Tests) != 1 {
		t.Fatalf("%d tests", len(doc.Tests))
	}
	tr := doc.Tests[0]
	c := tr.Counts
	if c.Scheduled != 16000 || c.Scheduled != c.Completed+c.Errors+c.Timeouts+c.Unsent {
		t.Fatalf("counts %+v: want 16000 scheduled, every one accounted for", c)
	}
	if tr.Connections != 50 {
		t.Errorf("%d connections, want the 50 the run kept through the move", tr.Connections)
	}
	var failovers []int
	for i, e := range tr.Events {
		if e.Kind == "failover" {
			failovers = append(failovers, i)
		}
	}
	if len(failovers) != 1 {
		t.Fatalf("events %+v: want one failover", tr.Events)
	}
	e := tr.Events[failovers[0]]
	if !slices.Contains(e.Nodes, sw.From) || !slices.Contains(e.Nodes, sw.To) || !slices.Contains(e.Seen, "+switch-master") {
		t.Fatalf("failover event %+v: want both primaries and +switch-master", e)
	}
	// The new primary took writes after the switch; the former one none
	// past half a second after it.
	if n, err := set.Server(sw.To).Calls("set"); err != nil || n == 0 {
		t.Fatalf("the new primary ran %d SETs (%v)", n, err)
	}
	if d := last.Sub(sw.At); d > 500*time.Millisecond {
		t.Errorf("the former primary took a write %v after the switch", d)
	}
	t0, err := time.Parse(time.RFC3339Nano, tr.StartedAt)
	if err != nil {
		t.Fatal(err)
	}
	at := func(w time.Time) float64 { return w.Sub(t0).Seconds() }
	lo, hi := min(at(sw.At), at(last)), max(at(sw.At), at(last))
	w := e.Write
	if w == nil {
		t.Fatalf("failover event without a write window: %+v", e)
	}
	t.Logf("switch at %.3f s (%s -> %s), the former primary's last write at %.3f s (%d SETs), event %+v, write window %+v", at(sw.At), sw.From, sw.To, at(last), lastCalls, e, *w)
	if w.StartS < lo-0.5 || w.EndS > hi+0.5 || w.UnavailableS < w.EndS-w.StartS-1e-5 || w.UnavailableS > w.EndS-w.StartS+1e-5 {
		t.Errorf("write window %.3f–%.3f s, want within 0.5 s of %.3f–%.3f s (the switch, the former primary's last write)", w.StartS, w.EndS, lo, hi)
	}
	if e.AtS < lo-0.5 || e.AtS > hi+0.5 {
		t.Errorf("event at %.3f s, the switch at %.3f s", e.AtS, at(sw.At))
	}
	marked := false
	for _, iv := range tr.Intervals {
		if iv.StartS <= e.AtS && e.AtS < iv.StartS+1 {
			marked = slices.Contains(iv.Events, failovers[0])
		}
	}
	if !marked {
		t.Errorf("the interval of the event does not mark it: %+v", tr.Intervals)
	}
	if !strings.Contains(o.stdout, "events (a request counts against one") || !strings.Contains(o.stdout, "failover") {
		t.Errorf("the text has no events section:\n%s", o.stdout)
	}
}

// TestSentinelWithACLAndTLS: sentinels that speak TLS only and want their
// own ACL user, over data nodes that speak TLS and want a password: the
// run finds the primary and sends to it; a wrong sentinel password is
// the sentinels' refusal, exit 1.
func TestSentinelWithACLAndTLS(t *testing.T) {
	testrun.SkipShort(t, "starts three TLS servers and three sentinels")
	t.Parallel()
	set := redistest.StartReplicatedTLS(t, 1, "--requirepass", "data-secret")
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{User: "watcher", Password: "sentinel-secret", DataPassword: "data-secret"})
	args := []string{"run", "--sentinel", s.Addrs(), "--master", s.Master, "--sentinel-user", "watcher", "--sentinel-pass", "sentinel-secret",
		"--tls", "--cacert", set.Primary.TLS.CA, "-a", "data-secret", "--rate", "1k", "-n", "500", "-t", "set", "-q"}
	code, stdout, stderr := pacer(t, args...)
	if !runOK(code) || !strings.Contains(stdout, "SET:") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n, err := set.Primary.Calls("set"); err != nil || n < 500 {
		t.Fatalf("the primary ran %d SETs (%v)", n, err)
	}
	args[8] = "wrong"
	code, _, stderr = pacer(t, args...)
	if code != exitFailed || !strings.Contains(stderr, "WRONGPASS") || strings.Contains(stderr, "sentinel-secret") {
		t.Fatalf("wrong sentinel password: exit %d, %s", code, stderr)
	}
}

// TestBenchFollowsSentinelFailover: a closed loop through the sentinels
// moves to the new primary after the batch under way when they fail it
// over: every request completes, and the former primary takes no more
// writes from it than half a second's.
func TestBenchFollowsSentinelFailover(t *testing.T) {
	testrun.SkipShort(t, "starts three servers and three sentinels, runs 6 s and fails over")
	t.Parallel()
	set := redistest.StartReplicated(t, 1)
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{})
	type outcome struct {
		code           int
		stdout, stderr string
	}
	done := make(chan outcome, 1)
	go func() {
		code, stdout, stderr := pacer(t, "bench", "--sentinel", s.Addrs(), "--master", s.Master, "--rate", "2000", "-n", "12000", "-c", "10", "-t", "set", "-q")
		done <- outcome{code, stdout, stderr}
	}()
	w := redistest.WatchWrites(set.Primary)
	time.Sleep(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := s.Failover(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	atSwitch, err := set.Primary.Calls("set")
	if err != nil {
		t.Fatal(err)
	}
	o := <-done
	_, calls := w.Stop()
	if !runOK(o.code) || !strings.Contains(o.stdout, "SET [closed loop") {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	// Two seconds' worth: the race detector slows the loop's moves, not
	// whether they happen.
	if sw.From != set.Primary.Addr || calls-atSwitch > 4000 {
		t.Fatalf("switch %s -> %s; the former primary took %d SETs after it as a primary, want at most 4000", sw.From, sw.To, calls-atSwitch)
	}
}
