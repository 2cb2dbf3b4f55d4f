package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
)

// calls reads INFO commandstats: calls per command.
func calls(t *testing.T, srv *redistest.Server) map[string]float64 {
	t.Helper()
	info, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for k, v := range info {
		if name, ok := strings.CutPrefix(k, "cmdstat_"); ok {
			field, _, _ := strings.Cut(v, ",")
			n, _ := strconv.ParseFloat(strings.TrimPrefix(field, "calls="), 64)
			out[name] = n
		}
	}
	return out
}

func target4(srv *redistest.Server) []string {
	return []string{"-h", "127.0.0.1", "-p", srv.PortString()}
}

// TestMixRatioAgainstRedis: a 9:1 mix at 20k req/s lands within 1% of the
// requested ratio, counted by the server.
func TestMixRatioAgainstRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	out := filepath.Join(t.TempDir(), "mix.json")
	args := append([]string{"run"}, target4(srv)...)
	args = append(args, "--rate", "20k", "--duration", "2s", "-c", "10", "--mix", "get:9,set:1", "-r", "1000", "-q", "--json", out, "--lag-limit", "1s")
	if code, _, stderr := pacer(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c := calls(t, srv)
	share := c["get"] / (c["get"] + c["set"])
	if c["get"]+c["set"] < 39000 || math.Abs(share-0.9)/0.9 > 0.01 {
		t.Fatalf("server saw %v GET and %v SET: GET share %.4f, want 0.9 within 1%%", c["get"], c["set"], share)
	}
	var doc struct {
		Tests []struct {
			Name     string `json:"name"`
			Counts   map[string]float64
			Commands map[string]struct {
				Counts     map[string]float64 `json:"counts"`
				ResponseMs map[string]float64 `json:"response_ms"`
				Histograms map[string]any     `json:"histograms"`
			} `json:"commands"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(readFile(t, out), &doc); err != nil {
		t.Fatal(err)
	}
	tt := doc.Tests[0]
	if tt.Name != "MIX get:9,set:1" || len(tt.Commands) != 2 {
		t.Fatalf("test %q with commands %v", tt.Name, tt.Commands)
	}
	// The server's counts and pacer's per-command counts agree.
	if g, s := tt.Commands["get"].Counts["completed"], tt.Commands["set"].Counts["completed"]; g != c["get"] || s != c["set"] || g+s != tt.Counts["completed"] {
		t.Fatalf("per-command completed %v + %v, server %v + %v, total %v", g, s, c["get"], c["set"], tt.Counts["completed"])
	}
	if _, ok := tt.Commands["get"].ResponseMs["p99.9"]; !ok || tt.Commands["set"].Histograms["response"] == nil {
		t.Fatal("per-command latency blocks are missing")
	}
}

// harmonic is Σ_{k=1..n} 1/k^s.
func harmonic(n int, s float64) float64 {
	var h float64
	for k := n; k >= 1; k-- {
		h += math.Pow(float64(k), -s)
	}
	return h
}

// TestZipfHotKeysAgainstRedis: with zipf:0.99 over 100k keys the hottest 1%
// receive the share the distribution predicts, counted by INCR on the
// server.
func TestZipfHotKeysAgainstRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const n = 200000
	args := append([]string{"bench"}, target4(srv)...)
	args = append(args, "-n", strconv.Itoa(n), "-P", "16", "-c", "8", "-q", "-r", "100000", "--key-dist", "zipf:0.99", "--seed", "1",
		"--command", "INCR counter:__key__")
	if code, _, stderr := pacer(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum := `local s = 0 for i = 0, 999 do local v = redis.call('GET', string.format('counter:%012d', i)) if v then s = s + tonumber(v) end end return s`
	got, err := srv.Do("EVAL", sum, "0")
	if err != nil {
		t.Fatal(err)
	}
	hot, _ := strconv.ParseFloat(got, 64)
	want := harmonic(1000, 0.99) / harmonic(100000, 0.99)
	if share := hot / n; math.Abs(share-want) > 0.01 {
		t.Fatalf("the hottest 1%% of keys got %.4f of the INCRs, zipf:0.99 predicts %.4f", share, want)
	}
	t.Logf("hottest 1%% of keys: %.4f of requests (predicted %.4f)", hot/n, want)
}

func TestFillThenGetsHit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	code, out, stderr := pacer(t, append(append([]string{"fill"}, target4(srv)...), "-r", "5000", "-d", "100", "-q")...)
	if code != 0 || !strings.HasPrefix(out, "filled 5000 keys (100 bytes each)") {
		t.Fatalf("fill: exit %d %q %q", code, out, stderr)
	}
	if n, _ := srv.Do("DBSIZE"); n != "5000" {
		t.Fatalf("DBSIZE %s after filling 5000", n)
	}
	if v, _ := srv.Do("STRLEN", "key:000000004999"); v != "100" {
		t.Fatalf("STRLEN of the last key %s", v)
	}
	srv.Do("CONFIG", "RESETSTAT")
	args := append(append([]string{"run"}, target4(srv)...), "--rate", "5k", "-n", "3000", "-c", "4", "-t", "get", "-r", "5000", "-q", "--lag-limit", "1s")
	if code, _, stderr := pacer(t, args...); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	info, _ := srv.Info("stats")
	if info["keyspace_misses"] != "0" || info["keyspace_hits"] != "3000" {
		t.Fatalf("hits %s misses %s: every GET should hit a filled key", info["keyspace_hits"], info["keyspace_misses"])
	}
}

func TestValueSizesAgainstRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for _, tc := range []struct {
		d      string
		lo, hi int
		only   map[int]bool
	}{
		{"10-20", 10, 20, nil},
		{"64:1,4096:1", 64, 4096, map[int]bool{64: true, 4096: true}},
	} {
		srv.Do("FLUSHALL")
		args := append(append([]string{"bench"}, target4(srv)...), "-n", "2000", "-c", "4", "-q", "-t", "set", "-r", "300", "-d", tc.d)
		if code, _, stderr := pacer(t, args...); code != 0 {
			t.Fatalf("-d %s: exit %d %s", tc.d, code, stderr)
		}
		script := `local out = {} for _, k in ipairs(redis.call('KEYS', 'key:*')) do out[#out+1] = redis.call('STRLEN', k) end return table.concat(out, ',')`
		// EVAL returns a bulk string with every length.
		got, err := srv.Do("EVAL", script, "0")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, f := range strings.Split(got, ",") {
			n, _ := strconv.Atoi(f)
			if n < tc.lo || n > tc.hi || (tc.only != nil && !tc.only[n]) {
				t.Fatalf("-d %s: a value of %d bytes", tc.d, n)
			}
			seen[n] = true
		}
		if len(seen) < 2 {
			t.Fatalf("-d %s: only sizes %v", tc.d, seen)
		}
	}
}

func TestCommandsFileAndWeights(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	file := filepath.Join(t.TempDir(), "mix.txt")
	os.WriteFile(file, []byte("# three commands\n3 hot=INCR hot:__key__\n1 SADD s:__key__ m\n"), 0o644)
	args := append(append([]string{"bench"}, target4(srv)...), "-n", "8000", "-c", "4", "-q", "-r", "10", "--commands", file,
		"--command", "LPUSH l:__key__ __data__", "--command-weight", "4")
	code, out, stderr := pacer(t, args...)
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	if !strings.Contains(out, "MIX lpush:4,hot:3,sadd:1") {
		t.Fatalf("title: %q", out)
	}
	c := calls(t, srv)
	total := c["incr"] + c["sadd"] + c["lpush"]
	for name, want := range map[string]float64{"lpush": 0.5, "incr": 0.375, "sadd": 0.125} {
		if got := c[name] / total; math.Abs(got-want) > 0.03 {
			t.Errorf("%s share %.3f, want %.3f", name, got, want)
		}
	}
}

func TestWorkloadUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rate", "1k", "--mix", "get:9,nosuch:1"}, `unknown command "nosuch"`},
		{[]string{"run", "--rate", "1k", "--mix", "get"}, "--mix"},
		{[]string{"run", "--rate", "1k", "--mix", "get:1", "-t", "set"}, "-t"},
		{[]string{"run", "--rate", "1k", "--command", "GET k:__key__"}, "__key__ needs a keyspace"},
		{[]string{"run", "--rate", "1k", "--key-dist", "zipf:0.99"}, "needs a keyspace"},
		{[]string{"run", "--rate", "1k", "-r", "10", "--key-dist", "pareto"}, "--key-dist"},
		{[]string{"run", "--rate", "1k", "--command", `GET "k`}, "quote"},
		{[]string{"run", "--rate", "1k", "--command-weight", "2"}, "--command-weight"},
		{[]string{"run", "--rate", "1k", "--commands", "/no/such/file"}, "--commands"},
		{[]string{"run", "--rate", "1k", "-d", "20-10"}, "-d"},
		{[]string{"fill"}, "-r N is required"},
		{[]string{"fill", "-r", "10", "--command", "SET k v"}, "__key__"},
	} {
		code, _, stderr := pacer(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d stderr %q, want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
