package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// TestReportBesideOtherTools: a pacer run, the CSV the real
// redis-benchmark writes against the same server, and a memtier_benchmark
// JSON (a fixture written from memtier's JSON writer) side by side in
// text, PNG and HTML.
func TestReportBesideOtherTools(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rb := redistest.Binary(t, "redis-benchmark")
	dir := t.TempDir()
	target := hostPort(t, srv.Addr)
	cmd := exec.Command(rb, append(target, "-n", "2000", "-c", "4", "-t", "get,set", "--csv")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	csv, err := cmd.Output()
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, stderr.String())
	}
	bench := filepath.Join(dir, "bench.csv")
	if err := os.WriteFile(bench, csv, 0o644); err != nil {
		t.Fatal(err)
	}
	run, _ := savedRun(t, dir, "run.json", append(append([]string{"run"}, target...), "--rate", "2k", "--duration", "1s", "-c", "4", "-t", "get,set", "--lag-limit", "1s", "-q")...)
	memtier, err := filepath.Abs(filepath.Join("..", "..", "report", "testdata", "memtier.json"))
	if err != nil {
		t.Fatal(err)
	}
	plot, page := filepath.Join(dir, "side.png"), filepath.Join(dir, "side.html")
	code, out, errs := pacer(t, "report", run, bench, memtier, "--plot", plot, "--html", page)
	if !runOK(code) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	testrun.Contains(t, out,
		"[2] bench.csv: redis-benchmark --csv", "it lacks p90, p99.9, p99.99, counts",
		"[3] memtier.json: memtier_benchmark --json-out-file",
		"====== GET ======", "====== SET ======", "n/a",
	)
	if strings.Contains(out, "No counterpart:\n  GET") || strings.Contains(out, "GET: only in") {
		t.Errorf("GET is not matched across the three:\n%s", out)
	}
	checkPNG(t, plot, "--plot")
	html := string(readFile(t, page))
	testrun.Contains(t, html, "bench.csv", "memtier.json", "its format lacks", "<svg")
	// A redis-benchmark CSV alone prints as a table of its own.
	if code, out, _ := pacer(t, "report", bench); code != exitOK || !strings.Contains(out, "====== GET ======") {
		t.Errorf("the csv alone: exit %d\n%s", code, out)
	}
	// Nor can it be merged: it is no shard.
	if code, _, stderr := pacer(t, "merge", bench, "-o", filepath.Join(dir, "m.json")); code != exitUsage || !strings.Contains(stderr, "not a shard's result") {
		t.Errorf("merge of a csv: exit %d, %q", code, stderr)
	}
}
