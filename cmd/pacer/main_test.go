package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/report"
)

// pacer runs the CLI in-process and returns exit code, stdout and stderr.
//
// Tests call t.Parallel unless they signal the process, set its
// environment, working directory or runtime settings, or judge timing
// (verdicts, lag, progress pacing): go test runs those first, one at a
// time, and the parallel ones after, side by side.
func pacer(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"pacer"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// interrupt sends this process the SIGINT a user's Ctrl-C is, for a
// command that runs until interrupted (Main on another goroutine, which
// sends its exit code on done), and returns the exit code; what names the
// command if it does not stop within 10 s.
func interrupt(t *testing.T, done <-chan int, what string) int {
	t.Helper()
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	select {
	case code := <-done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not stop on SIGINT", what)
		return 0
	}
}

// startMain runs pacer with args on another goroutine, which sends its
// exit code on done, and returns once its stdout satisfies ready; it fails
// t, quoting the output with notReady, if that takes over 20 s.
func startMain(t *testing.T, ready func(stdout string) bool, notReady string, args ...string) (done <-chan int, stdout, stderr *syncBuffer) {
	t.Helper()
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	c := make(chan int)
	go func() { c <- Main(append([]string{"pacer"}, args...), stdout, stderr) }()
	deadline := time.Now().Add(20 * time.Second)
	for !ready(stdout.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q %q", notReady, stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c, stdout, stderr
}

// wantUsageError runs pacer with args and fails t unless it exits 2 with
// one line on stderr, "pacer: …", holding want, and nothing on stdout.
func wantUsageError(t *testing.T, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := pacer(t, args...)
	msg := strings.TrimSuffix(stderr, "\n")
	if code != exitUsage || stdout != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "pacer: ") || !strings.Contains(msg, want) {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line \"pacer: …\" with %q", args, code, stdout, stderr, want)
	}
}

func hostPort(t *testing.T, addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"-h", host, "-p", port}
}

func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string // in the one-line message
	}{
		{"no rate", []string{"run"}, "--rate is required"},
		{"zero rate", []string{"run", "--rate", "0"}, "rate must be above zero"},
		{"negative rate", []string{"run", "--rate", "-5"}, "--rate"},
		{"rate garbage", []string{"run", "--rate", "fast"}, "--rate"},
		{"rate too fine", []string{"run", "--rate", "0.0001"}, "precision"},
		{"bad duration", []string{"run", "--rate", "1k", "--duration", "10"}, "duration"},
		{"zero duration", []string{"run", "--rate", "1k", "--duration", "0s"}, "--duration"},
		{"negative n", []string{"run", "--rate", "1k", "-n", "-1"}, "-n -1"},
		{"zero connections", []string{"run", "--rate", "1k", "-c", "0"}, "-c 0"},
		{"bad arrival", []string{"run", "--rate", "1k", "--arrival", "bursty"}, "--arrival"},
		{"bad pacing", []string{"run", "--rate", "1k", "--pacing", "exact"}, "--pacing"},
		{"unknown test", []string{"run", "--rate", "1k", "-t", "set,nosuch"}, `unknown test "nosuch"`},
		{"zero data size", []string{"run", "--rate", "1k", "-d", "0"}, `-d "0"`},
		{"negative keyspace", []string{"run", "--rate", "1k", "-r", "-3"}, "-r -3"},
		{"bad port", []string{"run", "--rate", "1k", "-p", "70000"}, "-p 70000"},
		{"user without password", []string{"run", "--rate", "1k", "--user", "bob"}, "--user"},
		{"max inflight zero", []string{"run", "--rate", "1k", "--max-inflight", "0"}, "--max-inflight"},
		{"-t with a command", []string{"run", "--rate", "1k", "-t", "get", "--", "PING"}, "-t"},
		{"json dir missing", []string{"run", "--rate", "1k", "--json", filepath.Join(dir, "no", "such", "out.json")}, "--json"},
		{"json is a dir", []string{"run", "--rate", "1k", "--json", dir}, "--json"},
		{"unknown flag", []string{"run", "--rate", "1k", "--bogus"}, "bogus"},
		{"unknown command", []string{"walk"}, "walk"},
	}
	for _, tc := range tests {
		wantUsageError(t, tc.want, tc.args...)
	}
}

func TestRunNoServerExits1(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	code, _, stderr := pacer(t, append([]string{"run", "--rate", "1k", "-n", "10"}, hostPort(t, addr)...)...)
	if code != exitFailed || !strings.Contains(stderr, "refused") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d stderr %q: want 1 and one line about the refused connection", code, stderr)
	}
}

var quietLine = regexp.MustCompile(`^(\S[^:]*): ([0-9.]+) requests per second \(target ([0-9.]+)\), response p50=([0-9.]+) msec p99=([0-9.]+) msec, (pass|inconclusive \(generator_behind\))$`)

func TestRunQuietAndJSON(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	out := filepath.Join(t.TempDir(), "result.json")
	args := append([]string{"run"}, hostPort(t, srv.Addr)...)
	args = append(args, "--rate", "2k", "-n", "1000", "-c", "4", "-t", "set,get", "-r", "100", "-q", "--json", out, "--lag-limit", "1s")
	code, stdout, stderr := pacer(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one quiet line per test, got %q", stdout)
	}
	for i, name := range []string{"SET", "GET"} {
		m := quietLine.FindStringSubmatch(lines[i])
		if m == nil || m[1] != name || m[3] != "2000" {
			t.Fatalf("quiet line %q does not match the documented format", lines[i])
		}
	}

	doc := readJSON[map[string]any](t, out)
	if doc["schema"] != "pacer.result/v1" || doc["mode"] != "open" {
		t.Fatalf("schema %v mode %v", doc["schema"], doc["mode"])
	}
	tests := doc["tests"].([]any)
	if len(tests) != 2 {
		t.Fatalf("%d tests in the JSON", len(tests))
	}
	for _, ti := range tests {
		tt := ti.(map[string]any)
		for _, f := range []string{"name", "target_rate", "achieved_rate", "duration_s", "counts", "response_ms", "service_ms", "send_lag_ms", "histograms", "verdict"} {
			if _, ok := tt[f]; !ok {
				t.Errorf("test %v lacks %q", tt["name"], f)
			}
		}
		// The default pacing is auto; --lag-limit 1s less the wake reserve is above
		// coarse's quantum, so auto uses coarse's.
		if tt["pacing"] != "auto" || tt["pacing_quantum_us"] != 800.0 {
			t.Errorf("pacing %v with a quantum of %v µs, want auto with 800", tt["pacing"], tt["pacing_quantum_us"])
		}
		counts := tt["counts"].(map[string]any)
		for _, f := range []string{"scheduled", "sent", "completed", "errors", "timeouts", "unsent"} {
			if _, ok := counts[f]; !ok {
				t.Errorf("counts lack %q", f)
			}
		}
		if counts["scheduled"].(float64) != 1000 || counts["completed"].(float64) != 1000 {
			t.Errorf("counts %v", counts)
		}
		for _, block := range []string{"response_ms", "service_ms", "send_lag_ms"} {
			m := tt[block].(map[string]any)
			for _, f := range []string{"min", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"} {
				if _, ok := m[f]; !ok {
					t.Errorf("%s lacks %q", block, f)
				}
			}
		}
		hs := tt["histograms"].(map[string]any)
		for _, f := range []string{"response", "service", "send_lag"} {
			h, err := histo.Decode(hs[f].(string))
			if err != nil {
				t.Fatalf("histogram %s: %v", f, err)
			}
			if h.TotalCount() != 1000 {
				t.Errorf("histogram %s holds %d values, want 1000", f, h.TotalCount())
			}
		}
		// The summary is the histogram's: p99 agrees.
		h, _ := histo.Decode(hs["response"].(string))
		if p99 := tt["response_ms"].(map[string]any)["p99"].(float64); p99 != histo.Millis(h.ValueAtQuantile(99)) {
			t.Errorf("response_ms.p99 %v disagrees with the histogram's %v", p99, histo.Millis(h.ValueAtQuantile(99)))
		}
	}
}

func TestRunCustomCommandAndJSONToStdout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	args := append([]string{"run"}, hostPort(t, srv.Addr)...)
	args = append(args, "--rate", "5k", "-n", "500", "-c", "2", "-r", "50", "-d", "7", "--json", "-", "--lag-limit", "1s",
		"--", "HSET", "h:__rand_int__", "f", "__data__")
	code, stdout, stderr := pacer(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Tests []struct {
			Name string `json:"name"`
		} `json:"tests"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not the JSON document: %v\n%s", err, stdout)
	}
	if len(doc.Tests) != 1 || doc.Tests[0].Name != "HSET h:__rand_int__ f __data__" {
		t.Fatalf("tests %+v", doc.Tests)
	}
	if !strings.Contains(stderr, "====== HSET") {
		t.Fatalf("human summary should go to stderr with --json -: %q", stderr)
	}
	// Keys are 12-digit numbers below 50; values are 7 bytes.
	n, err := srv.Do("DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := strconv.Atoi(n); k < 10 || k > 50 {
		t.Fatalf("DBSIZE %s, want up to 50 hashes", n)
	}
	// Check a hash that exists: a missing key must fail the test, not pass it.
	key, err := srv.Do("RANDOMKEY")
	if err != nil || !regexp.MustCompile(`^h:[0-9]{12}$`).MatchString(key) {
		t.Fatalf("RANDOMKEY %q %v: want a key h:<12 digits>", key, err)
	}
	if err := checkHashValue(srv, key, 7); err != nil {
		t.Fatal(err)
	}
	if err := checkHashValue(srv, "h:missing", 7); err == nil {
		t.Fatal("the value check passes for a missing key")
	}
}

// checkHashValue checks that field f of hash key holds a value of n bytes.
func checkHashValue(srv *redistest.Server, key string, n int) error {
	v, err := srv.Do("HSTRLEN", key, "f")
	if err != nil {
		return fmt.Errorf("HSTRLEN %s: %v", key, err)
	}
	if v != strconv.Itoa(n) {
		return fmt.Errorf("HSTRLEN %s f = %q, want %d (0: the key or field is missing)", key, v, n)
	}
	return nil
}

func TestRunPoissonIsReproducible(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	counts := make([]string, 2)
	for i := range counts {
		args := append([]string{"run"}, hostPort(t, srv.Addr)...)
		args = append(args, "--rate", "1k", "--duration", "300ms", "--arrival", "poisson", "--seed", "7", "-t", "ping_mbulk", "--json", "-", "--lag-limit", "1s")
		code, stdout, stderr := pacer(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct {
			Tests []struct {
				Counts map[string]int `json:"counts"`
			} `json:"tests"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		counts[i] = strconv.Itoa(doc.Tests[0].Counts["scheduled"])
	}
	if counts[0] != counts[1] {
		t.Fatalf("same seed scheduled %s then %s requests", counts[0], counts[1])
	}
}

// readJSON decodes the JSON file at path into a T (a document's shape as a
// test needs it).
func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(readFile(t, path), &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// readResult reads the result document at path with report.ReadDocument,
// and holds every test it reads to what pacer's figures must be, whatever
// the test asks of them (latenciesHold).
func readResult(t *testing.T, path string) *report.Document {
	t.Helper()
	doc, err := report.ReadDocument(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for i := range doc.Tests {
		tt := &doc.Tests[i]
		latenciesHold(t, path, tt.Name, tt.Latencies)
		if tt.Repeats != nil {
			for k, run := range tt.Repeats.Runs {
				latenciesHold(t, path, fmt.Sprintf("%s, run %d", tt.Name, k+1), run.Latencies)
			}
		}
	}
	return doc
}

// latenciesHold checks what holds of every request, and so of the
// figures: its service time (from the write) is never longer than its
// response time (from the intended instant, which the write never
// precedes), so neither is the longest. A run whose service times were
// another's (the pool once added every run into the first one's) breaks
// it.
func latenciesHold(t *testing.T, path, what string, l report.Latencies) {
	t.Helper()
	if l.ResponseMs == nil || l.ServiceMs == nil {
		return
	}
	if s, r := l.ServiceMs.Max, l.ResponseMs.Max; s > r*1.001+0.0005 {
		t.Errorf("%s: %s: the longest service time %.6f ms is longer than the longest response time %.6f ms", path, what, s, r)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// syncBuffer is a bytes.Buffer safe for concurrent writers and a reader;
// with limit above zero it keeps only the first limit bytes written to it.
type syncBuffer struct {
	limit int
	mu    sync.Mutex
	b     bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit <= 0 {
		return s.b.Write(p)
	}
	if room := s.limit - s.b.Len(); room > 0 {
		s.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
