package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// shardDoc is a shard's result of one test with a response histogram of
// values (ns), a send lag max and start_at.
func shardDoc(t *testing.T, k, n int, values []int64, lagMax float64, scheduled uint64) map[string]any {
	t.Helper()
	h := hdrhistogram.New(1, 60e9, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return doc1(t, h, map[string]any{"k": k, "n": n}, lagMax, scheduled)
}

func doc1(t *testing.T, h *hdrhistogram.Histogram, shard map[string]any, lagMax float64, scheduled uint64) map[string]any {
	t.Helper()
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"schema":   "pacer.result/v1",
		"shard":    shard,
		"start_at": "2030-01-02T15:04:05Z",
		"config":   map[string]any{"rate": 3000.0, "arrival": "uniform"},
		"tests": []any{map[string]any{
			"id":          "get",
			"counts":      map[string]any{"scheduled": scheduled, "completed": h.TotalCount()},
			"response_ms": map[string]any{"p99": millis(h.ValueAtQuantile(99)), "p99.9": millis(h.ValueAtQuantile(99.9)), "max": millis(h.Max())},
			"send_lag_ms": map[string]any{"max": lagMax},
			"histograms":  map[string]any{"response": string(enc)},
			"verdict":     "ok",
		}},
	}
}

func write(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckPassesTheExactMergeAndFailsEachMiss: three shards whose p99s
// differ from their sum's; a merge that is their sum passes, and each of
// an averaged p99, a lost request, a late shard and a server that saw a
// pod's first request late fails.
func TestCheckPassesTheExactMergeAndFailsEachMiss(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	sum := hdrhistogram.New(1, 60e9, 3)
	for k := 1; k <= 3; k++ {
		var values []int64
		for i := range 1000 {
			values = append(values, int64(k*100_000+i*1000*k)) // each shard its own spread
		}
		d := shardDoc(t, k, 3, values, 0.5, 1000)
		shards = append(shards, write(t, dir, "shard"+string(rune('0'+k))+".json", d))
		for _, v := range values {
			_ = sum.RecordValue(v)
		}
	}
	merged := func(edit func(m map[string]any)) string {
		m := doc1(t, sum, map[string]any{"n": 3, "merged": []int{1, 2, 3}}, 0.5, 3000)
		if edit != nil {
			edit(m)
		}
		return write(t, dir, "merged.json", m)
	}
	test := func(m map[string]any) map[string]any { return m["tests"].([]any)[0].(map[string]any) }
	monitor := filepath.Join(dir, "monitor.txt")
	// start_at is 1893596645 s; the pods' first requests reach the server
	// 0.2, 0.3 and 0.4 ms after it.
	if err := os.WriteFile(monitor, []byte("0 1893596645.000200\n1 1893596645.000300\n2 1893596645.000400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(m string, extra ...string) []string {
		return append(append([]string{"-merged", m, "-requests", "3000", "-first-send", "50ms"}, extra...), shards...)
	}
	var out bytes.Buffer
	if code, err := run(args(merged(nil), "-monitor", monitor), &out); code != 0 || err != nil {
		t.Fatalf("the exact merge: exit %d, %v\n%s", code, err, out.String())
	}
	if !strings.Contains(out.String(), "PASS") {
		t.Errorf("no PASS:\n%s", out.String())
	}
	late := filepath.Join(dir, "late.txt")
	if err := os.WriteFile(late, []byte("0 1893596645.000200\n1 1893596645.070000\n2 1893596645.000400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		edit  func(m map[string]any)
		extra []string
		want  string
	}{
		{"averaged p99", func(m map[string]any) {
			test(m)["response_ms"].(map[string]any)["p99"] = test(m)["response_ms"].(map[string]any)["p99"].(float64) - 0.001
		}, nil, "merged response p99"},
		{"lost request", func(m map[string]any) { test(m)["counts"].(map[string]any)["completed"] = 2999 }, nil, "completed 2999"},
		{"late shard", nil, []string{"-first-send", "0.4ms"}, "first send 1.167 ms after start_at, not within"},
		{"server saw a pod late", nil, []string{"-monitor", late}, "the server got its first request 70.000 ms"},
		{"other start", func(m map[string]any) { m["start_at"] = "2030-01-02T15:04:06Z" }, nil, "starts at"},
	} {
		out.Reset()
		code, err := run(args(merged(c.edit), c.extra...), &out)
		if code != 1 || err != nil || !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: exit %d, %v, want exit 1 and %q:\n%s", c.name, code, err, c.want, out.String())
		}
	}
}

// TestFirstSend: first_send_ms is the first send, counted from start_at;
// without it, the first interval's largest send lag bounds the first
// request's when its reply was read within the first interval, the test's
// otherwise.
func TestFirstSend(t *testing.T) {
	rate := 1000.0
	d := doc{Config: config{Rate: &rate, Arrival: "uniform"}, Shard: &shard{K: 3, N: 3}, StartAt: "2030-01-02T15:04:05Z"}
	tst := test{SendLag: map[string]float64{"max": 40}, Response: map[string]float64{"max": 60}, RecvLag: map[string]float64{"max": 5},
		Intervals: []interval{{Start: 0, Duration: 1, SendLag: map[string]float64{"max": 3}}}, StartedAt: "2030-01-02T15:04:05Z"}
	check := func(what string, want firstSend, wantBound float64) {
		t.Helper()
		got := firstSendOf(tst, d)
		b, _ := got.bound()
		if got != want || b != wantBound {
			t.Errorf("%s: %+v (bound %v), want %+v (bound %v)", what, got, b, want, wantBound)
		}
	}
	check("reply within the first interval", firstSend{due: 2, byLag: 5, hasDue: true, hasLag: true}, 5)
	tst.Response["max"] = 996 // 2 ms offset + 996 + 5 > 1000 ms
	check("reply maybe after the first interval", firstSend{due: 2, byLag: 42, hasDue: true, hasLag: true}, 42)
	ms := 2.25
	tst.FirstSendMs = &ms
	check("first_send_ms", firstSend{due: 2, sent: 2.25, byLag: 42, hasDue: true, hasSent: true, hasLag: true}, 2.25)
	tst.StartedAt = "2030-01-02T15:04:07Z" // a second test, 2 s after the start
	check("a later test", firstSend{due: 2, sent: 2002.25, byLag: 42, hasDue: true, hasSent: true, hasLag: true}, 2002.25)
	d.Config.Arrival = "poisson"
	check("poisson: no offset", firstSend{sent: 2002.25, hasSent: true}, 2002.25)
}
