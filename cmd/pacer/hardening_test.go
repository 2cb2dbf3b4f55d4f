package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// TestBadInvocations: every bad input is one line on stderr and exit 2,
// never a stack trace, for every command.
func TestBadInvocations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A regular file as the directory: unwritable even for root.
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	cases := [][]string{
		{"run"},
		{"run", "--rate", "0"},
		{"run", "--rate", "-1"},
		{"run", "--rate", "1e3"},
		{"run", "--rate", "10x"},
		{"run", "--rate", "1k", "--duration", "ten"},
		{"run", "--rate", "1k", "--duration", "-1s"},
		{"run", "--rate", "1k", "-n", "0"},
		{"run", "--rate", "1k", "-c", "-4"},
		{"run", "--rate", "1k", "-c", "100000"},
		{"run", "--rate", "1k", "-t", "get,bogus"},
		{"run", "--rate", "1k", "-d", "-3"},
		{"run", "--rate", "1k", "-d", "1k"},
		{"run", "--rate", "1k", "-d", "5-2"},
		{"run", "--rate", "1k", "-r", "ten"},
		{"run", "--rate", "1k", "--arrival", "burst"},
		{"run", "--rate", "1k", "--pacing", "fast"},
		{"run", "--rate", "1k", "--drain", "-1s"},
		{"run", "--rate", "1k", "--timeout", "0s"},
		{"run", "--rate", "1k", "--max-backlog", "0s"},
		{"run", "--rate", "1k", "--max-inflight", "-1"},
		{"run", "--rate", "1k", "--lag-limit", "-1ms"},
		{"run", "--rate", "1k", "--slo", "p99"},
		{"run", "--rate", "1k", "--slo", "p99<soon"},
		{"run", "--rate", "1k", "--slo", "latency<5ms"},
		{"run", "--rate", "1k", "--slo", "errors<200%"},
		{"run", "--rate", "1k", "--slo", "p99<5ms", "--slo-window", "1500ms"},
		{"run", "--rate", "1k", "--slo", "p99<5ms", "--slo-window", "250ms", "--interval", "100ms"},
		{"run", "--rate", "1k", "--slo", "p99<5ms", "--slo-window", "0s"},
		{"run", "--rate", "1k", "--slo-window", "10s"},
		{"bench", "--slo", "p99<5ms", "--slo-window", "1500ms"},
		{"compare", "--slo-window", "10s"},
		{"run", "--rate", "1k", "--json", filepath.Join(notDir, "x.json")},
		{"run", "--rate", "1k", "--json", filepath.Join(dir, "missing", "x.json")},
		{"run", "--rate", "1k", "-t", "get", "--", "SET", "a", "b"},
		{"run", "--rate", "1k", "--mix", "get:1", "--", "PING"},
		{"run", "--rate", "1k", "--embedded", "-h", "10.0.0.1"},
		{"run", "--rate", "1k", "--stall", "1s", "--every", "2s"},
		{"run", "--rate", "1k", "-p", "0"},
		{"run", "--rate", "1k", "--dbnum", "-1"},
		{"run", "--rate", "1k", "--no-such-flag"},
		{"bench", "-n", "-5"},
		{"bench", "-c", "0"},
		{"bench", "--tls", "--cert", "client.crt"},
		{"bench", "--tls", "--tls-ciphers", "NULL-MD5"},
		{"run", "--rate", "1k", "--sni", "redis.example"},
		{"run", "--rate", "1k", "--tls", "-s", "/tmp/redis.sock"},
		{"serve", "--tls-cert", "server.crt"},
		{"serve", "--user", "alice"},
		{"bench", "--cluster", "--embedded"},
		{"run", "--rate", "1k", "--cluster", "--embedded"},
		{"compare", "--cluster", "--embedded"},
		{"bench", "--slo", "p99<"},
		{"bench", "-u", "redis://"},
		{"bench", "--latency", "avg"},
		{"bench", "-x"},
		{"compare", "--duration", "0s"},
		{"compare", "-t", "get,set"},
		{"compare", "--rate", "zero"},
		{"compare", "--pacing", "slow"},
		{"fill", "-r", "0"},
		{"fill", "-r", "10", "-d", "0"},
		{"serve", "--port", "99999"},
		{"serve", "--delay", "soon"},
		{"serve", "extra-arg"},
		{"nosuchcommand"},
	}
	for _, args := range cases {
		code, _, stderr := pacer(t, args...)
		msg := strings.TrimSpace(stderr)
		if code != exitUsage || msg == "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "pacer: ") ||
			strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%q: exit %d, stderr %q: want exit 2 and one line starting with 'pacer: '", args, code, stderr)
		}
	}
	if len(cases) < 48 {
		t.Fatal("keep dozens of cases")
	}
}

// TestSLOServerMissExits3: a server 50 ms slow at every request misses a
// 1 ms bound by more than any noise of a quiet client host: the server's,
// exit 3. It judges a verdict, so it runs alone (no t.Parallel): with the
// in-process target, tests beside it add their load to both sides.
func TestSLOServerMissExits3(t *testing.T) {
	code, out, _ := pacer(t, "run", "--embedded", "--delay", "50ms", "--rate", "10", "-n", "10", "-c", "2", "-t", "get", "-q", "--slo", "p99<1ms")
	if code != exitSLO || !strings.Contains(out, "slo violated") {
		t.Fatalf("violated SLO: exit %d %q", code, out)
	}
}

func TestSLOExitCodes(t *testing.T) {
	t.Parallel()
	base := []string{"run", "--embedded", "--rate", "1k", "-n", "500", "-c", "2", "-t", "get", "-q", "--lag-limit", "1s"}
	code, out, stderr := pacer(t, append(base, "--slo", "p99<1s,errors<1%")...)
	if code != exitOK || !strings.Contains(out, "slo pass") {
		t.Fatalf("passing SLO: exit %d %q %q", code, out, stderr)
	}
	// An injected error rate breaks an error budget; bench reports on stderr.
	code, _, stderr = pacer(t, "bench", "--embedded", "--error-rate", "0.05", "-e", "-n", "1000", "-q", "-t", "get", "--slo", "errors<1%")
	if code != exitSLO || !strings.Contains(stderr, "slo: VIOLATED: errors") {
		t.Fatalf("bench: exit %d stderr %q", code, stderr)
	}
}

// init gives the in-process tests the GOMAXPROCS that main gives the
// binary for an open loop (most of them run one), since Main itself leaves
// the runtime's settings alone.
func init() {
	if n := procsFor([]string{"pacer", "run"}); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

// buildPacer builds the binary once per test run.
var buildOnce struct {
	sync.Once
	path string
	err  error
}

func pacerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pacer-bin")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "pacer")
		out, err := exec.Command("go", "build", "-o", buildOnce.path, ".").CombinedOutput()
		if err != nil {
			buildOnce.err = &exec.ExitError{Stderr: out}
		}
	})
	if buildOnce.err != nil {
		t.Fatalf("build: %v", buildOnce.err)
	}
	return buildOnce.path
}

// TestFirstCtrlCDrainsAndWritesPartialResults sends a real SIGINT to the
// binary: it stops the timeline, writes the JSON marked interrupted with
// every request accounted for, and exits 130.
func TestFirstCtrlCDrainsAndWritesPartialResults(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "partial.json")
	cmd := exec.Command(pacerBinary(t), "run", "--embedded", "--rate", "2k", "--duration", "60s", "-c", "4", "-t", "get", "-q", "--json", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || time.Since(start) > 5*time.Second {
		t.Fatalf("exit %d after %v, want 130 within the 2 s drain", code, time.Since(start))
	}
	var doc struct {
		Interrupted bool `json:"interrupted"`
		Tests       []struct {
			Interrupted bool              `json:"interrupted"`
			Counts      map[string]uint64 `json:"counts"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(readFile(t, out), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Tests[0].Counts
	if !doc.Interrupted || !doc.Tests[0].Interrupted || c["scheduled"] == 0 || c["scheduled"] > 20000 ||
		c["scheduled"] != c["completed"]+c["errors"]+c["timeouts"]+c["unsent"] {
		t.Fatalf("partial result %+v", doc)
	}
}

// TestSecondCtrlCExitsAtOnce: with the server frozen, the drain would wait
// its 2 s; a second SIGINT ends the process at once.
func TestSecondCtrlCExitsAtOnce(t *testing.T) {
	testrun.SkipShort(t, "interrupts runs for seconds (TestFirstCtrlCDrainsAndWritesPartialResults covers -short)")
	// The first stall runs from 6 s to 11 s after the target starts.
	cmd := exec.Command(pacerBinary(t), "run", "--embedded", "--stall", "5s", "--every", "6s", "--rate", "1k", "--duration", "60s", "-c", "2", "-t", "get", "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(7 * time.Second) // inside the first stall: requests pile up unanswered
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || time.Since(start) > time.Second {
		t.Fatalf("exit %d %v after the second SIGINT, want 130 at once", code, time.Since(start))
	}
}

// startBinary starts the built pacer with args, after setup (nil: none)
// has changed the command as it needs; its stdout and stderr are collected
// unless setup set them.
func startBinary(t *testing.T, setup func(*exec.Cmd), args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(pacerBinary(t), args...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &stdout, &stderr
}

// waitFor waits at most limit for cmd to end and returns its exit code (-1
// when a signal killed it) and how long it took.
func waitFor(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v still running after %v", cmd.Args[1:], limit)
	}
	return cmd.ProcessState.ExitCode(), time.Since(start)
}

// partialDoc is what the tests read of a result document.
type partialDoc struct {
	Interrupted bool `json:"interrupted"`
	Tests       []struct {
		Name        string            `json:"name"`
		Interrupted bool              `json:"interrupted"`
		Counts      map[string]uint64 `json:"counts"`
		Verdict     string            `json:"verdict"`
		FirstError  string            `json:"first_error"`
	} `json:"tests"`
}

func readDoc(t *testing.T, path string) partialDoc { return readJSON[partialDoc](t, path) }

// TestInterruptSignalsWritePartialResults: SIGINT, SIGTERM and SIGHUP (the
// terminal went away) each stop the run, write the partial JSON marked
// interrupted and exit 130. SIGHUP used to kill pacer with no JSON.
func TestInterruptSignalsWritePartialResults(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "signals runs for seconds (TestFirstCtrlCDrainsAndWritesPartialResults covers -short)")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "partial.json")
			cmd, _, stderr := startBinary(t, nil, "run", "--embedded", "--rate", "2k", "--duration", "60s", "-c", "4", "-t", "get", "-q", "--json", out)
			time.Sleep(1500 * time.Millisecond)
			cmd.Process.Signal(sig)
			code, took := waitFor(t, cmd, 30*time.Second)
			if code != exitInterrupted {
				t.Fatalf("exit %d after %v, want 130; stderr %q", code, took, stderr)
			}
			doc := readDoc(t, out)
			if !doc.Interrupted || len(doc.Tests) != 1 || !doc.Tests[0].Interrupted || doc.Tests[0].Counts["scheduled"] == 0 {
				t.Fatalf("partial result %+v", doc)
			}
		})
	}
}

// TestSIGQUITDumpsGoroutinesAndExits131: SIGQUIT keeps Go's goroutine dump
// but exits 131, never 2 (the usage code).
func TestSIGQUITDumpsGoroutinesAndExits131(t *testing.T) {
	t.Parallel()
	cmd, _, stderr := startBinary(t, nil, "run", "--embedded", "--rate", "1k", "--duration", "60s", "-c", "2", "-t", "get", "-q")
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGQUIT)
	code, _ := waitFor(t, cmd, 30*time.Second)
	if code != exitQuitCode || !strings.Contains(stderr.String(), "goroutine ") || !strings.Contains(stderr.String(), "SIGQUIT") {
		t.Fatalf("exit %d, want %d with a goroutine dump on stderr; stderr starts %.300q", code, exitQuitCode, stderr)
	}
}

// TestClosedStdoutAndStderr: with both streams gone (2>&- >&-, or a
// terminal that hung up), the results still reach the file and the exit
// code is the run's.
func TestClosedStdoutAndStderr(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "result.json")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd, _, _ := startBinary(t, func(cmd *exec.Cmd) { cmd.Stdout, cmd.Stderr = w, w },
		"run", "--embedded", "--rate", "2k", "-n", "300", "-c", "2", "-t", "get,set", "--lag-limit", "1s", "--json", out)
	w.Close()
	code, _ := waitFor(t, cmd, 60*time.Second)
	if doc := readDoc(t, out); len(doc.Tests) != 2 || code != exitOK {
		t.Fatalf("exit %d, result %+v: want 0 and both tests", code, doc)
	}
}

// exitQuitCode is 128 + SIGQUIT, as the README documents.
const exitQuitCode = 131

// TestClosedStdoutKeepsResultsAndExitCode: pacer … --json f | head -c1.
// The reader goes away after one byte; pacer must still write f and exit
// with the run's own code, for every command that writes results.
func TestClosedStdoutKeepsResultsAndExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--embedded", "--rate", "2k", "-n", "300", "-c", "2", "-t", "get,set,incr", "--lag-limit", "1s"}},
		{"bench", []string{"bench", "--embedded", "-n", "2000", "-c", "2", "-t", "get,set,incr"}},
		{"compare", []string{"compare", "--embedded", "--rate", "1k", "--duration", "300ms", "-c", "2", "-q", "--drain", "1s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd, _, stderr := startBinary(t, func(cmd *exec.Cmd) { cmd.Stdout = w }, append(tc.args, "--json", out)...)
			w.Close()
			// head -c1: read one byte, then go away.
			one := make([]byte, 1)
			r.Read(one)
			if tc.name == "run" {
				// The result file is written before the test's output.
				if _, err := os.Stat(out); err != nil {
					t.Errorf("stdout was written before the result file: %v", err)
				}
			}
			r.Close()
			code, _ := waitFor(t, cmd, 60*time.Second)
			doc := readDoc(t, out)
			if len(doc.Tests) == 0 || doc.Interrupted {
				t.Fatalf("result file %+v", doc)
			}
			// The run's own code: compare has no --lag-limit, and a noisy
			// machine may leave its open loop behind (4).
			want := exitOK
			for _, tt := range doc.Tests {
				if tt.Verdict == "generator_behind" {
					want = exitUntrusted
				}
			}
			if code != want {
				t.Fatalf("exit %d, want the run's %d; stderr %q", code, want, stderr)
			}
			if n := strings.Count(stderr.String(), "stdout could not be written"); n != 1 {
				t.Errorf("want the lost output noted once on stderr, got %d times: %q", n, stderr)
			}
		})
	}
}

// noAuth answers every command as a server that wants a password.
var noAuth = hostile.Answer("-NOAUTH Authentication required.\r\n")

// TestNothingCompletedExits1: a run in which no request completed failed
// (exit 1, the reason on stderr), in run, bench and compare, whether the
// server refused every command or dropped every connection.
func TestNothingCompletedExits1(t *testing.T) {
	t.Parallel()
	refuse := hostile.Start(t, noAuth)
	drop := hostile.Start(t, hostile.AcceptClose)
	redis := redistest.Start(t, "--requirepass", "right-password")
	cases := []struct {
		name string
		addr string
		args []string
	}{
		{"run/NOAUTH", refuse.Addr, []string{"run", "--rate", "1k", "-n", "200", "-c", "2", "-t", "get", "--lag-limit", "1s"}},
		{"run/requirepass", redis.Addr, []string{"run", "--rate", "1k", "-n", "200", "-c", "2", "-t", "get", "--lag-limit", "1s"}},
		{"run/connections lost", drop.Addr, []string{"run", "--rate", "1k", "-n", "200", "-c", "2", "-t", "get", "--lag-limit", "1s", "--drain", "1s"}},
		{"bench -e/NOAUTH", refuse.Addr, []string{"bench", "-n", "200", "-c", "2", "-t", "get", "-e"}},
		{"bench/NOAUTH", refuse.Addr, []string{"bench", "-n", "200", "-c", "2", "-t", "get"}},
		{"bench/connections lost", drop.Addr, []string{"bench", "-n", "200", "-c", "2", "-t", "get"}},
		{"compare/NOAUTH", refuse.Addr, []string{"compare", "--rate", "1k", "--duration", "300ms", "-c", "2", "-q"}},
		{"compare/connections lost", drop.Addr, []string{"compare", "--rate", "1k", "--duration", "300ms", "-c", "2", "-q", "--drain", "1s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			code, _, stderr := pacer(t, append(append(tc.args, hostPort(t, tc.addr)...), "--json", out)...)
			if code != exitFailed || strings.TrimSpace(stderr) == "" {
				t.Fatalf("exit %d, want 1 with the reason on stderr; stderr %q", code, stderr)
			}
			if _, err := os.Stat(out); err != nil {
				t.Errorf("the result file was not written: %v", err)
			}
		})
	}
}

// TestCommandsLeaveRuntimeSettings: commands run in-process (tests, Main) leave
// the runtime's settings as they found them; main sets GOMAXPROCS once.
func TestCommandsLeaveRuntimeSettings(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	before := runtime.GOMAXPROCS(0)
	help := cli.HelpFlag
	for _, args := range [][]string{
		{"run", "--embedded", "--rate", "1k", "-n", "50", "-c", "1", "-t", "get", "-q", "--lag-limit", "1s"},
		{"compare", "--embedded", "--rate", "1k", "--duration", "100ms", "-c", "1", "-q"},
		append([]string{"bench", "-n", "50", "-c", "1", "-t", "get", "-q"}, hostPort(t, srv.Addr)...),
		append([]string{"bench", "-n", "50", "-c", "1", "-t", "get", "-q", "--threads", "3"}, hostPort(t, srv.Addr)...),
	} {
		pacer(t, args...)
		if got := runtime.GOMAXPROCS(0); got != before || cli.HelpFlag != help {
			runtime.GOMAXPROCS(before)
			t.Errorf("%q changed GOMAXPROCS from %d to %d (or the help flag)", args, before, got)
		}
	}
}

// TestMainRunsSideBySide: runs of Main at once share nothing of
// urfave/cli's package state that they write (its help command and
// flags); under -race, a write shared by two of them fails the test.
func TestMainRunsSideBySide(t *testing.T) {
	t.Parallel()
	// Every command, this one's and any added later, has a help command
	// of its own app's: urfave/cli adds its shared one to a command
	// without.
	a, b := newApp(io.Discard, io.Discard), newApp(io.Discard, io.Discard)
	for i, cmd := range a.Commands {
		if h := cmd.Command("help"); h == nil || h == b.Commands[i].Command("help") {
			t.Errorf("pacer %s has no help command of its own (set it with withHelp)", cmd.Name)
		}
	}
	var wg sync.WaitGroup
	for _, args := range [][]string{{"run", "--help"}, {"bench", "help"}, {"sweep", "--help"}, {"version"}, {"help", "run"}} {
		for range 2 {
			wg.Go(func() {
				if code, stdout, stderr := pacer(t, args...); code != exitOK || stdout == "" {
					t.Errorf("%q: exit %d, stdout %d bytes, stderr %q", args, code, len(stdout), stderr)
				}
			})
		}
	}
	wg.Wait()
}

func TestProcsForCommandLines(t *testing.T) {
	const cpus = 4
	for _, tc := range []struct {
		args []string
		env  string
		want int // 0: leave the runtime's default
	}{
		{[]string{"pacer"}, "", 0},
		{[]string{"pacer", "--help"}, "", 0},
		{[]string{"pacer", "run", "--rate", "1k"}, "", cpus + 1}, // the sleeping pacer holds a P
		{[]string{"pacer", "run", "--rate", "1k"}, "3", 0},       // GOMAXPROCS set: the user's choice
		{[]string{"pacer", "compare"}, "", cpus + 1},
		{[]string{"pacer", "bench"}, "", 1},                                   // redis-benchmark's single thread
		{[]string{"pacer", "bench", "-t", "get", "--threads", "3"}, "", 3},    // --threads N
		{[]string{"pacer", "bench", "-threads=6", "-q"}, "", 6},               // any flag syntax
		{[]string{"pacer", "bench", "--threads", "900"}, "", maxBenchThreads}, // capped as redis-benchmark does
		{[]string{"pacer", "bench", "--threads", "0"}, "", 1},                 // off
		{[]string{"pacer", "bench", "--embedded"}, "", 0},                     // the embedded target needs the cores
		{[]string{"pacer", "bench", "--threads", "2"}, "1", 0},                // GOMAXPROCS set
		{[]string{"pacer", "bench", "--bogus", "--threads", "2"}, "", 1},      // a usage error follows anyway
		{[]string{"pacer", "bench", "lpush", "--threads", "2"}, "", 1},
		{[]string{"pacer", "bench", "--", "ECHO", "--threads", "30"}, "", 1},     // after the command: an argument
		{[]string{"pacer", "bench", "-a", "--threads", "--threads", "2"}, "", 2}, // a value, not a flag
		{[]string{"pacer", "fill", "-r", "10"}, "", 0},
		{[]string{"pacer", "serve"}, "", 0},
	} {
		if got := procsForEnv(tc.args, tc.env, cpus); got != tc.want {
			t.Errorf("procsForEnv(%q, GOMAXPROCS=%q) = %d, want %d", tc.args, tc.env, got, tc.want)
		}
	}
}

// TestCtrlCWithinTwoSecondsInEveryState: the documented contract, the first
// Ctrl-C ends the run (exit 130) after at most a 2 s drain, holds in the
// dial phase (a server that never answers the handshake), during the run
// (a server that never answers) and during the drain. The margin is
// generous (a loaded CI VM); the times are logged.
func TestCtrlCWithinTwoSecondsInEveryState(t *testing.T) {
	testrun.SkipShort(t, "interrupts runs in every state for seconds")
	const contract, margin = 2 * time.Second, 1500 * time.Millisecond
	// States whose fix lives in another package: measured and logged, then
	// skipped until the fix lands (delete the entry then).
	// States whose fix has not landed, by name, with the fix they wait for.
	pending := map[string]string{}
	silent := hostile.Start(t, hostile.Silent)
	// Answers CONFIG GET (bench's set-up) and nothing else.
	configOnly := hostile.Start(t, hostile.Serve(func(args []string) string {
		if len(args) > 0 && strings.EqualFold(args[0], "CONFIG") {
			return "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"
		}
		if len(args) > 0 && strings.EqualFold(args[0], "PING") {
			return "+PONG\r\n"
		}
		return ""
	}))
	// Answers the connection check (PING) and nothing else: the run
	// starts, and every request waits.
	pingOnly := hostile.Start(t, hostile.Serve(func(args []string) string {
		if len(args) > 0 && strings.EqualFold(args[0], "PING") {
			return "+PONG\r\n"
		}
		return ""
	}))
	for _, tc := range []struct {
		name  string
		addr  string
		args  []string
		after time.Duration // SIGINT this long after the start
	}{
		// -a makes a handshake the server never answers.
		{"dial", silent.Addr, []string{"run", "--rate", "1k", "--duration", "60s", "-c", "4", "-t", "get", "-q", "-a", "x"}, time.Second},
		{"run", pingOnly.Addr, []string{"run", "--rate", "1k", "--duration", "60s", "-c", "4", "-t", "get", "-q"}, 1500 * time.Millisecond},
		{"drain", pingOnly.Addr, []string{"run", "--rate", "1k", "--duration", "1s", "--drain", "10s", "-c", "4", "-t", "get", "-q"}, 2500 * time.Millisecond},
		{"bench set-up", silent.Addr, []string{"bench", "-n", "1000000", "-c", "4", "-t", "get", "-q"}, 1500 * time.Millisecond},
		{"bench run", configOnly.Addr, []string{"bench", "-n", "1000000", "-c", "4", "-t", "get", "-q"}, 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Side by side: each waits on a server that does not answer,
			// with almost nothing to do; the parent stays sequential.
			t.Parallel()
			cmd, _, stderr := startBinary(t, nil, append(tc.args, hostPort(t, tc.addr)...)...)
			time.Sleep(tc.after)
			cmd.Process.Signal(syscall.SIGINT)
			code, took := waitFor(t, cmd, 90*time.Second)
			t.Logf("%s: exit %d %v after SIGINT", tc.name, code, took.Round(time.Millisecond))
			if code != exitInterrupted || took > contract+margin {
				if why, ok := pending[tc.name]; ok {
					t.Skipf("exit %d after %v: pending %s", code, took, why)
				}
				t.Fatalf("exit %d after %v, want 130 within %v (+%v margin); stderr %q", code, took, contract, margin, stderr)
			}
		})
	}
}

// TestOutputPathsCheckedBeforeTheRun: a directory, a path under a file or a
// missing directory is a usage error (exit 2) before any connection.
func TestOutputPathsCheckedBeforeTheRun(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.OK)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, path := range []string{dir, filepath.Join(file, "x.json"), filepath.Join(dir, "missing", "x.json")} {
		for _, args := range [][]string{
			{"run", "--rate", "1k", "-n", "10", "-t", "get"},
			{"bench", "-n", "10", "-t", "get"},
			{"compare", "--rate", "1k", "--duration", "100ms"},
		} {
			code, _, stderr := pacer(t, append(append(args, hostPort(t, srv.Addr)...), "--json", path)...)
			if code != exitUsage || !strings.Contains(stderr, "--json") {
				t.Errorf("%s --json %s: exit %d, want 2; stderr %q", args[0], path, code, stderr)
			}
		}
	}
	if n := srv.Accepted(); n != 0 {
		t.Errorf("%d connections were made before the output path was checked", n)
	}
}

// targetLostPending names the fix TestTargetLostMidRunExits1 waits for;
// empty once the scheduler that reports target_lost is merged.
const targetLostPending = ""

// TestTargetLostMidRunExits1: the server answers for a while, then every
// connection goes and none comes back: the verdict is target_lost and the
// run failed (exit 1), though some requests completed.
func TestTargetLostMidRunExits1(t *testing.T) {
	t.Parallel()
	var srv *hostile.Server
	var once sync.Once
	srv = hostile.Start(t, func(c *hostile.Client) {
		for range 100 {
			if _, err := c.ReadCommand(); err != nil || c.Write("+OK\r\n") != nil {
				return
			}
		}
		once.Do(func() { go srv.Close() }) // gone for good: redials are refused
	})
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := pacer(t, append([]string{"run", "--rate", "1k", "--duration", "2s", "-c", "2", "-t", "get", "--lag-limit", "1s",
		"--drain", "500ms", "--json", out}, hostPort(t, srv.Addr)...)...)
	doc := readDoc(t, out)
	if len(doc.Tests) != 1 || doc.Tests[0].Counts["completed"] == 0 {
		t.Fatalf("result %+v: want some requests completed before the loss", doc)
	}
	if v := doc.Tests[0].Verdict; v != "target_lost" && targetLostPending != "" {
		t.Skipf("verdict %q, exit %d: pending %s", v, code, targetLostPending)
	}
	if code != exitFailed || !strings.Contains(stderr, "target lost") {
		t.Fatalf("exit %d, want 1 with the reason on stderr; stderr %q", code, stderr)
	}
	// The drop was said as it happened (a redial may get in before the
	// server closes: "0 of 2 open, 1 replaced so far; requests wait…").
	if !strings.Contains(stderr, " lost by ") || !strings.Contains(stderr, "0 of 2 open") || !strings.Contains(stderr, "requests wait for a reconnect") {
		t.Fatalf("no line about the lost connections; stderr %q", stderr)
	}
}

// TestJudge: the trust rule's outcome as an exit code, and the reason on
// stderr when the run failed or cannot be trusted (the rule itself is
// tested on crafted results in package report).
func TestJudge(t *testing.T) {
	t.Parallel()
	counts := func(scheduled, completed uint64) scheduler.Counts {
		return scheduler.Counts{Scheduled: scheduled, Sent: scheduled, Completed: completed, Errors: scheduled - completed}
	}
	behind := &scheduler.Result{Name: "GET", Mode: "open", TargetRate: timeline.RatePerSecond(1000), LagLimit: time.Millisecond,
		Counts: scheduler.Counts{Scheduled: 1000, Sent: 900, Completed: 900, Unsent: 100}}
	for _, tc := range []struct {
		name string
		res  *scheduler.Result
		slo  *report.SLOResult
		want int
		says string
	}{
		{"ok", &scheduler.Result{Mode: "closed", Counts: counts(10, 10)}, nil, exitOK, ""},
		{"behind", behind, nil, exitUntrusted, "pacer: GET: inconclusive: only 90.00% of scheduled requests were sent"},
		{"slo violated", &scheduler.Result{Mode: "closed", Counts: counts(10, 10)}, &report.SLOResult{}, exitSLO, ": fail: the server missed"},
		{"lost", &scheduler.Result{Name: "GET", TargetGone: true, Counts: counts(10, 4)}, nil,
			exitFailed, "pacer: GET: error: target lost: every connection was lost and none came back"},
		{"nothing completed", &scheduler.Result{Name: "SET", Counts: counts(10, 0), FirstError: "NOAUTH Authentication required."}, nil,
			exitFailed, "pacer: SET: error: target lost: none of 10 scheduled requests completed; the first error was: NOAUTH Authentication required."},
		{"closed loop, nothing completed", &scheduler.Result{Name: "GET", Mode: "closed", Counts: counts(5, 0)}, nil,
			exitFailed, "none of 5 scheduled requests completed"},
		{"nothing scheduled", &scheduler.Result{}, nil, exitOK, ""},
	} {
		var stderr syncBuffer
		tt, _, err := verdict.NewTest(tc.res, report.TestOptions{}, verdict.SLO{})
		if err != nil {
			t.Fatal(err)
		}
		tt.SLO = tc.slo
		j := verdict.Judge(tt)
		var end verdict.Ending
		judged(&stderr, &end, tt, j)
		if got := end.Code(); got != tc.want || !strings.Contains(stderr.String(), tc.says) || (tc.says == "") != (stderr.String() == "") {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.name, got, stderr.String(), tc.want, tc.says)
		}
	}
}
