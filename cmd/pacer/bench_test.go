package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
)

// redisBenchmark runs the real redis-benchmark with args.
func redisBenchmark(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	bin := redistest.Binary(t, "redis-benchmark")
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("redis-benchmark %v hung", args)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func csvRows(t *testing.T, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("bad CSV %q: %v", s, err)
	}
	return rows
}

var digits = regexp.MustCompile(`[0-9]+`)

// keyspace returns the key names in the server, digits folded, and
// empties it.
func keyspace(t *testing.T, srv *redistest.Server) []string {
	t.Helper()
	c, err := netDialRedis(srv)
	if err != nil {
		t.Fatal(err)
	}
	keys := c
	seen := map[string]bool{}
	for _, k := range keys {
		seen[digits.ReplaceAllString(k, "N")] = true
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	if _, err := srv.Do("FLUSHALL"); err != nil {
		t.Fatal(err)
	}
	return out
}

// netDialRedis lists keys with redis-cli (the harness client reads only a
// reply's first line).
func netDialRedis(srv *redistest.Server) ([]string, error) {
	out, err := exec.Command("redis-cli", "-p", srv.PortString(), "--scan").Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// TestBenchParityWithRedisBenchmark runs the real redis-benchmark and
// pacer bench with the same flags against the same server and compares
// the test names, the CSV columns and the keys each leaves behind.
func TestBenchParityWithRedisBenchmark(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	target := []string{"-h", "127.0.0.1", "-p", srv.PortString()}
	for _, extra := range [][]string{{}, {"-r", "50"}, {"-r", "50", "-P", "4", "-d", "10"}} {
		args := append(append([]string{}, target...), "-n", "300", "-c", "5", "--csv")
		args = append(args, extra...)
		rbOut, rbErr, rbCode := redisBenchmark(t, args...)
		if rbCode != 0 {
			t.Fatalf("redis-benchmark %v: exit %d %s", args, rbCode, rbErr)
		}
		rbKeys := keyspace(t, srv)
		code, pbOut, pbErr := pacer(t, append([]string{"bench"}, args...)...)
		if code != 0 {
			t.Fatalf("pacer bench %v: exit %d %s", args, code, pbErr)
		}
		pbKeys := keyspace(t, srv)

		rb, pb := csvRows(t, rbOut), csvRows(t, pbOut)
		if strings.Join(rb[0], ",") != strings.Join(pb[0], ",") {
			t.Fatalf("CSV header %v, redis-benchmark's %v", pb[0], rb[0])
		}
		var rbNames, pbNames []string
		for _, r := range rb[1:] {
			rbNames = append(rbNames, r[0])
		}
		for _, r := range pb[1:] {
			pbNames = append(pbNames, r[0])
			if len(r) != len(pb[0]) {
				t.Fatalf("row %v has %d columns", r, len(r))
			}
		}
		// redis-benchmark before 7.2 has no XADD test; pacer follows 7.2.
		hasXadd := strings.Contains(rbOut, `"XADD"`)
		if !hasXadd {
			pbNames = without(pbNames, "XADD")
			pbKeys = without(pbKeys, "mystream")
		}
		if strings.Join(rbNames, "|") != strings.Join(pbNames, "|") {
			t.Fatalf("%v: tests\n  %v\nredis-benchmark's\n  %v", extra, pbNames, rbNames)
		}
		if strings.Join(rbKeys, " ") != strings.Join(pbKeys, " ") {
			t.Fatalf("%v: keys left %v, redis-benchmark's %v", extra, pbKeys, rbKeys)
		}
	}
}

// shape keeps what a parser sees of a report: the text after the last
// carriage return of each line, numbers folded, runs of spaces folded,
// repeated lines once.
func shape(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.LastIndex(l, "\r"); i >= 0 {
			l = l[i+1:]
		}
		l = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`).ReplaceAllString(l, "N")
		// %9.3f pads by the value's width: compare the words, not the padding
		// (the golden files pin the exact bytes).
		l = regexp.MustCompile(` +`).ReplaceAllString(l, " ")
		if len(out) == 0 || out[len(out)-1] != l {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestBenchOutputShapesMatchRedisBenchmark(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	target := []string{"-h", "127.0.0.1", "-p", srv.PortString()}
	for _, extra := range [][]string{
		{"-q", "-t", "set,get,lrange_100"},
		{"-t", "get"},
		{"-q", "lpush", "mylist", "x"},
		{"--threads", "2", "-t", "ping_mbulk"},
	} {
		args := append(append([]string{}, target...), "-n", "400", "-c", "4")
		args = append(args, extra...)
		rbOut, _, rbCode := redisBenchmark(t, args...)
		code, pbOut, pbErr := pacer(t, append([]string{"bench"}, args...)...)
		if rbCode != 0 || code != 0 {
			t.Fatalf("%v: exits %d and %d (%s)", extra, rbCode, code, pbErr)
		}
		if shape(rbOut) != shape(pbOut) {
			t.Fatalf("%v: output shape differs\n--- pacer\n%s\n--- redis-benchmark\n%s", extra, shape(pbOut), shape(rbOut))
		}
	}
}

var benchQuietLine = regexp.MustCompile(`^ \r([^:]+): [0-9]+\.[0-9]{2} requests per second, p50=[0-9]+\.[0-9]{3} msec$`)

func TestBenchQuietLineBytes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	code, out, stderr := pacer(t, "bench", "-p", srv.PortString(), "-n", "500", "-q", "-t", "set")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	if !benchQuietLine.MatchString(lines[0]) || lines[1] != "" || len(lines) != 3 {
		t.Fatalf("quiet output %q", out)
	}
}

func TestBenchErrorsAndExitCodes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	if _, err := srv.Do("SET", "str", "x"); err != nil {
		t.Fatal(err)
	}
	port := srv.PortString()
	// An error reply ends the run with exit 1, in redis-benchmark's words.
	_, rbErr, rbCode := redisBenchmark(t, "-p", port, "-n", "100", "-q", "lpush", "str", "a")
	code, _, stderr := pacer(t, "bench", "-p", port, "-n", "100", "-q", "lpush", "str", "a")
	if code != 1 || rbCode != 1 {
		t.Fatalf("exit %d (redis-benchmark %d)", code, rbCode)
	}
	want := "Error from server: WRONGTYPE Operation against a key holding the wrong kind of value"
	if strings.TrimSpace(stderr) != want || !strings.Contains(rbErr, want) {
		t.Fatalf("stderr %q (redis-benchmark %q)", stderr, rbErr)
	}
	// -e shows errors (at most one a second) and keeps going; with nothing
	// completed the run failed: exit 1 (redis-benchmark exits 0). A second
	// is a second of the wall clock, as in redis-benchmark: the 100
	// errors, a few milliseconds long, print once, or twice when they
	// straddle the turn of a second.
	code, out, stderr := pacer(t, "bench", "-p", port, "-n", "100", "-q", "-e", "lpush", "str", "a")
	if n := strings.Count(out, "Error from server: WRONGTYPE"); code != exitFailed || n < 1 || n > 2 {
		t.Fatalf("-e: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// No server: exit 1 and one line.
	srv.Stop()
	code, _, stderr = pacer(t, "bench", "-p", port, "-n", "10", "-q")
	if code != 1 || !strings.HasPrefix(stderr, "WARNING: Could not fetch server CONFIG\nCould not connect to Redis at 127.0.0.1:"+port+": Connection refused") {
		t.Fatalf("no server: exit %d stderr %q", code, stderr)
	}
}

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--cluster", "--embedded"}, "--cluster needs a Redis Cluster"},
		{[]string{"bench", "--cluster", "-k", "0"}, "--cluster with -k 0"},
		{[]string{"bench", "--cacert", "x.pem"}, "--cacert needs --tls"},
		{[]string{"bench", "--tls", "--cacert", "no-such.pem"}, "--cacert no-such.pem: no such file"},
		{[]string{"bench", "-u", "rediss://h:1", "--tls-ciphers", "NOPE"}, `unknown or unsupported cipher "NOPE"`},
		{[]string{"bench", "-u", "http://h"}, "redis:// or rediss://"},
		{[]string{"bench", "-c", "0"}, "-c 0"},
		{[]string{"bench", "-n", "0"}, "-n 0"},
		{[]string{"bench", "-t", "sett"}, `unknown test "sett"`},
		{[]string{"bench", "--latency", "mean"}, "--latency"},
		{[]string{"bench", "--rate", "0"}, "--rate"},
		{[]string{"bench", "-r", "many"}, "-r"},
	}
	for _, tc := range tests {
		wantUsageError(t, tc.want, tc.args...)
	}
}

func TestBenchJSONAndRate(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dir := t.TempDir()
	for _, rate := range []string{"", "2k"} {
		out := filepath.Join(dir, "r"+rate+".json")
		args := []string{"bench", "-p", srv.PortString(), "-n", "400", "-c", "4", "-t", "get", "-q", "--json", out}
		if rate != "" {
			args = append(args, "--rate", rate)
		}
		code, stdout, stderr := pacer(t, args...)
		// A throttled loop that fell behind its rate (the limiter forgets
		// what a busy machine made it miss) is generator_behind: exit 4.
		if code != 0 && !(rate != "" && code == exitUntrusted) {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct {
			Mode  string `json:"mode"`
			Tests []struct {
				Name       string          `json:"name"`
				Mode       string          `json:"mode"`
				TargetRate *float64        `json:"target_rate"`
				SendLag    json.RawMessage `json:"send_lag_ms"`
				Response   struct {
					P50 float64 `json:"p50"`
				} `json:"response_ms"`
				Service struct {
					P50 float64 `json:"p50"`
				} `json:"service_ms"`
				Counts map[string]int `json:"counts"`
			} `json:"tests"`
		}
		b := readFile(t, out)
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		tt := doc.Tests[0]
		if doc.Mode != "closed" || tt.Mode != "closed" || tt.Counts["completed"] != 400 || tt.Response.P50 != tt.Service.P50 {
			t.Fatalf("%s", b)
		}
		if rate == "" {
			if tt.TargetRate != nil || string(tt.SendLag) != "null" || tt.Name != "GET" {
				t.Fatalf("unthrottled: target_rate %v send_lag %s name %q", tt.TargetRate, tt.SendLag, tt.Name)
			}
		} else {
			label := "GET [closed loop at 2000 req/s]"
			if tt.TargetRate == nil || *tt.TargetRate != 2000 || string(tt.SendLag) == "null" || tt.Name != label || !strings.Contains(stdout, label+":") {
				t.Fatalf("throttled: target_rate %v send_lag %s name %q stdout %q", tt.TargetRate, tt.SendLag, tt.Name, stdout)
			}
		}
	}
}

func TestBenchURIAndDB(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "--requirepass", "pw")
	code, _, stderr := pacer(t, "bench", "-u", "redis://:pw@127.0.0.1:"+srv.PortString()+"/2", "-n", "50", "-q", "-t", "set")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, err := srv.Info("keyspace")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info["db2"]; !ok || len(info) != 1 {
		t.Fatalf("keyspace %v: the SETs should be in db 2 only", info)
	}
}

func TestBenchIdleUntilInterrupted(t *testing.T) {
	srv := redistest.Start(t)
	banner := func(stdout string) bool { return strings.Contains(stdout, "Creating 3 idle connections") }
	done, _, _ := startMain(t, banner, "no idle banner", "bench", "-p", srv.PortString(), "-c", "3", "-I")
	time.Sleep(200 * time.Millisecond)
	info, _ := srv.Info("clients")
	if info["connected_clients"] != "4" { // 3 idle and the harness's own
		t.Errorf("connected_clients %s", info["connected_clients"])
	}
	if code := interrupt(t, done, "idle mode"); code != exitInterrupted {
		t.Fatalf("exit %d", code)
	}
}

func TestUnixSocketRESP3AndTracking(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "redis.sock")
	srv := redistest.Start(t, "--unixsocket", sock)
	code, out, stderr := pacer(t, "bench", "-s", sock, "-n", "2000", "-q", "-t", "set,get", "-3", "--enable-tracking")
	if code != 0 || strings.Count(out, "requests per second") != 2 {
		t.Fatalf("bench over a unix socket: exit %d %q %q", code, out, stderr)
	}
	code, out, stderr = pacer(t, "run", "-s", sock, "--rate", "2k", "-n", "1000", "-q", "-t", "get", "-3", "--lag-limit", "1s")
	if code != 0 || !strings.Contains(out, "GET: ") {
		t.Fatalf("run over a unix socket: exit %d %q %q", code, out, stderr)
	}
	// The server saw the handshakes: HELLO 3 on every connection of both
	// runs, CLIENT TRACKING on every bench connection.
	c := calls(t, srv)
	if c["hello"] < 2*50 || c["client|tracking"]+c["client"] < 50 {
		t.Fatalf("handshakes the server saw: %v", c)
	}
}
