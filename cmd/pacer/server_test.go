package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// TestRunShowsTheServerSide: against the embedded target, run prints the
// server's identity and, under each test, its time per call; the JSON
// keeps both.
func TestRunShowsTheServerSide(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.json")
	code, out, stderr := pacer(t, "run", "--embedded", "--rate", "2k", "-n", "400", "-c", "4", "-t", "set,get", "-r", "100", "--json", path)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(out, "server: pacer-embedded 7.2.0 (standalone); save \"\", appendonly no, io-threads 1, maxmemory-policy noeviction; 0 keys\n\n====== SET") {
		t.Fatalf("no identity first:\n%s", out)
	}
	if strings.Count(out, "server side    (INFO commandstats") != 2 || !strings.Contains(out, "time split     mean response") {
		t.Fatalf("no server table under each test:\n%s", out)
	}
	doc := readResult(t, path)
	if doc.Server == nil || !doc.Server.Available || doc.Server.Name != "pacer-embedded" {
		t.Fatalf("document server %+v", doc.Server)
	}
	for i, name := range []string{"set", "get"} {
		st := doc.Tests[i].Server
		if st == nil || !st.Available || st.Commands[name].Calls != doc.Tests[i].Counts.Sent || st.Commands[name].LatencyHistogram == nil {
			t.Fatalf("tests[%d].server %+v (sent %d)", i, st, doc.Tests[i].Counts.Sent)
		}
		if _, ok := st.Commands["info"]; ok {
			t.Fatalf("tests[%d]: pacer's own INFO counted: %v", i, st.Commands)
		}
	}
	if k := doc.Tests[0].Server.Keys; k == nil || *k == 0 || *k > 100 {
		t.Fatalf("keys after SET: %v", k)
	}
}

// refusingINFO is a managed service's server: INFO and CONFIG renamed
// away, the load answered.
func refusingINFO(t *testing.T) *hostile.Server {
	return hostile.Start(t, hostile.Serve(func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "INFO", "CONFIG", "LATENCY":
			return "-ERR unknown command '" + args[0] + "', with args beginning with: \r\n"
		case "PING":
			return "+PONG\r\n"
		case "GET":
			return "$-1\r\n"
		}
		return "+OK\r\n"
	}))
}

// TestRefusedInfoIsSaidOnce: run, bench and compare against a server that
// refuses INFO and CONFIG say so once on stderr and go on.
func TestRefusedInfoIsSaidOnce(t *testing.T) {
	t.Parallel()
	srv := refusingINFO(t)
	target := hostPort(t, srv.Addr)
	path := filepath.Join(t.TempDir(), "run.json")
	code, out, stderr := pacer(t, append([]string{"run", "--rate", "2k", "-n", "200", "-c", "2", "-t", "set,get", "--json", path}, target...)...)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "refuses INFO") != 1 || strings.Count(stderr, "refuses CONFIG GET") != 1 {
		t.Fatalf("run: stderr should say each refusal once:\n%s", stderr)
	}
	if !strings.HasPrefix(out, "server: unknown (INFO refused: ERR unknown command 'INFO'") ||
		strings.Count(out, "server side    not available: INFO refused") != 2 {
		t.Fatalf("run: stdout\n%s", out)
	}
	doc := readResult(t, path)
	if doc.Server == nil || doc.Server.Available || !strings.Contains(doc.Server.Error, "INFO refused") {
		t.Fatalf("run: document server %+v", doc.Server)
	}
	for i, tt := range doc.Tests {
		if tt.Server == nil || tt.Server.Available || tt.Server.Error == "" || tt.Server.Commands == nil {
			t.Fatalf("run: tests[%d].server %+v", i, tt.Server)
		}
	}

	code, out, stderr = pacer(t, append([]string{"bench", "-n", "200", "-c", "2", "-t", "set,get"}, target...)...)
	if code != exitOK {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "WARNING: Could not fetch server CONFIG") != 1 || strings.Count(stderr, "refuses INFO") != 1 ||
		strings.Contains(stderr, "refuses CONFIG") || strings.Contains(out, "server") {
		t.Fatalf("bench: stdout\n%s\nstderr\n%s", out, stderr)
	}

	code, out, stderr = pacer(t, append([]string{"compare", "--rate", "1k", "--duration", "200ms", "-c", "2", "-q"}, target...)...)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "refuses INFO") != 1 || strings.Contains(out, "server per call") {
		t.Fatalf("compare: stdout\n%s\nstderr\n%s", out, stderr)
	}
}

// TestSilentInfoCostsAFewTimeouts: a server that never answers INFO (but
// serves the load) delays the run by a bounded number of timeouts, said
// once.
func TestSilentInfoCostsAFewTimeouts(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "waits out INFO timeouts for seconds")
	srv := hostile.Start(t, hostile.Serve(func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "INFO", "CONFIG", "LATENCY":
			return "" // never answered
		case "PING":
			return "+PONG\r\n"
		}
		return "+OK\r\n"
	}))
	path := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := pacer(t, append([]string{"run", "--rate", "2k", "-n", "100", "-c", "2", "-t", "set,set,set", "--json", path}, hostPort(t, srv.Addr)...)...)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "did not answer INFO") != 1 {
		t.Fatalf("stderr should say it once:\n%s", stderr)
	}
	doc := readResult(t, path)
	for i, tt := range doc.Tests {
		if tt.Server == nil || tt.Server.Available {
			t.Fatalf("tests[%d].server %+v", i, tt.Server)
		}
	}
}

// TestBenchKeepsRedisBenchmarkFormats: the server's side goes to stderr
// with the full report, nowhere with -q or --csv; the JSON has it.
func TestBenchKeepsRedisBenchmarkFormats(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bench.json")
	code, out, stderr := pacer(t, "bench", "--embedded", "-n", "300", "-c", "3", "-t", "get", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "server") || !strings.Contains(stderr, "server: pacer-embedded 7.2.0") ||
		!strings.Contains(stderr, "server side: get 300 calls, ") {
		t.Fatalf("stdout\n%s\nstderr\n%s", out, stderr)
	}
	doc := readResult(t, path)
	if doc.Server == nil || !doc.Server.Available || doc.Tests[0].Server == nil || doc.Tests[0].Server.Commands["get"].Calls != 300 {
		t.Fatalf("JSON server %+v, test %+v", doc.Server, doc.Tests[0].Server)
	}
	for _, args := range [][]string{{"-q"}, {"--csv"}} {
		code, out, stderr := pacer(t, append([]string{"bench", "--embedded", "-n", "100", "-c", "2", "-t", "get"}, args...)...)
		if code != exitOK || strings.Contains(out, "server") || strings.Contains(stderr, "server") {
			t.Fatalf("%v: exit %d\nstdout\n%s\nstderr\n%s", args, code, out, stderr)
		}
	}
}

// TestBenchLoopMergesServerStats: with -l, a test's server counts add up
// over the loops like its own; the loop cut short by Ctrl-C is not asked
// (Ctrl-C must end pacer within two seconds), and the JSON says so.
func TestBenchLoopMergesServerStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loop.json")
	threeLoops := func(stdout string) bool { return strings.Count(stdout, "INCR:") >= 3 }
	done, _, _ := startMain(t, threeLoops, "no loops", "bench", "--embedded", "-l", "-n", "200", "-c", "2", "-q", "-t", "incr", "--json", path)
	interrupt(t, done, "bench -l")
	doc := readResult(t, path)
	st := doc.Tests[0].Server
	if st == nil || !st.Available {
		t.Fatalf("server %+v", st)
	}
	calls := st.Commands["incr"].Calls
	// The interrupt may land after a loop's line and before the server is
	// asked about it: that loop is then explained below, not counted.
	if calls < 2*200 || calls%200 != 0 || calls > doc.Tests[0].Counts.Completed {
		t.Fatalf("server counted %d INCRs over the loops, pacer completed %d", calls, doc.Tests[0].Counts.Completed)
	}
	if calls < doc.Tests[0].Counts.Completed && !strings.Contains(st.Error, "not asked after the test") {
		t.Fatalf("the interrupted loop's gap is not explained: %+v", st)
	}
}

// TestFillSaysWhatTheServerHolds: fill says the server's identity on
// stderr and, after its own line, the server's side and how many keys it
// holds.
func TestFillSaysWhatTheServerHolds(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	code, out, stderr := pacer(t, "fill", "-p", srv.PortString(), "-r", "500", "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "filled 500 keys") || !strings.HasPrefix(lines[2], "seed ") ||
		!strings.HasPrefix(lines[1], "server side: set 500 calls, ") || !strings.HasSuffix(lines[1], "; 500 keys after") {
		t.Fatalf("stdout\n%s", out)
	}
	if !strings.HasPrefix(stderr, "server: redis ") || !strings.Contains(stderr, "; 0 keys\n") {
		t.Fatalf("stderr\n%s", stderr)
	}
}
