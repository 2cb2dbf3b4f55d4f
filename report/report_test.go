package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// sample builds a deterministic result: 10000 requests with response
// times 1..10 ms, service half of that, lag 10-19 µs.
func sample() *scheduler.Result {
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	for i := int64(1); i <= 10000; i++ {
		resp.Record(i * 1000)
		serv.Record(i * 500)
		lag.Record(10000 + i%10*1000)
	}
	rate, _ := timeline.ParseRate("10k")
	r := &scheduler.Result{
		Name: "SET", Mode: "open", TargetRate: rate, Arrival: "uniform", Pacing: "precise",
		Connections: 50,
		Counts:      scheduler.Counts{Scheduled: 10003, Sent: 10002, Completed: 9998, Errors: 2, Timeouts: 2, Unsent: 1},
		Window:      time.Second + 250*time.Microsecond,
		Response:    resp.Snapshot(), Service: serv.Snapshot(), Lag: lag.Snapshot(),
		ErrorCodes: map[string]uint64{"ERR": 1, "WRONGTYPE": 1},
		FirstError: "ERR",
		LagLimit:   time.Millisecond,
	}
	return r
}

// The golden files are pins written by -update from this package's own
// output, not independent checks: see testdata/README.md.

func TestTextGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Text(&b, asTest(t, sample(), nil), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text.golden", b.Bytes())
}

func TestQuietGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Quiet(&b, asTest(t, sample(), nil), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "quiet.golden", b.Bytes())
}

func TestJSONGolden(t *testing.T) {
	t.Parallel()
	tt := asTest(t, sample(), nil)
	tt.ID = "set" // the command sets it (fromResult leaves it empty)
	doc := &Document{Schema: Schema, Mode: "open", Tool: Tool{Name: "pacer", Version: "test"},
		StartedAt: "2026-01-01T00:00:00Z", Config: map[string]any{"rate": 10000}, Tests: []Test{*tt}}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "result.golden.json", b)
	// The histograms in the document decode back to the recorded values.
	var back Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	h, err := histo.Decode(back.Tests[0].Histograms.Response)
	if err != nil || h.TotalCount() != 10000 {
		t.Fatalf("decoded response histogram: %v, %d values", err, h.TotalCount())
	}
}

func TestWriteOutputAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := writeOutput(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(b) != "two" || len(entries) != 1 {
		t.Fatalf("content %q, %d files in the directory (no temp file may remain)", b, len(entries))
	}
	if err := writeOutput(filepath.Join(dir, "missing", "x.json"), nil); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if err := checkOutput(filepath.Join(dir, "new.json")); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatal("checkOutput left a file behind")
	}
}

// benchSample is a closed-loop result with a redis-benchmark-geometry
// histogram of known values.
func benchSample() *scheduler.Result {
	r := histo.NewRecorderGeometry(10, 3000000, 3)
	for i := int64(1); i <= 2000; i++ {
		r.Record(150 + i%7*40 + i/1000*900) // 0.15–2.1 ms
	}
	ns := histo.NewRecorder()
	ns.Record(1)
	return &scheduler.Result{
		Name: "SET", Mode: "closed", Connections: 50,
		Counts: scheduler.Counts{Scheduled: 2000, Sent: 2000, Completed: 2000},
		Window: 25 * time.Millisecond, Micros: r.Snapshot(), Response: ns.Snapshot(), Service: ns.Snapshot(),
	}
}

// TestBenchFormatsGolden pins redis-benchmark's formats as rendered here
// (testdata/bench.golden, written by -update, not by redis-benchmark); the
// comparison with the real redis-benchmark is
// cmd/pacer's TestBenchParityWithRedisBenchmark.
func TestBenchFormatsGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	res := benchSample()
	if err := BenchCSVHeader(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := BenchCSV(&b, "SET", asTest(t, res, nil), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := BenchQuiet(&b, "SET", asTest(t, res, nil), 0, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := BenchQuiet(&b, "SET", asTest(t, res, nil), 12, TextOptions{}); err != nil { // after a 12-byte progress line
		t.Fatal(err)
	}
	n, err := BenchProgress(&b, "SET", 80000, 79000.5, 0.2999, 0.31, 0)
	if err != nil || n != len("SET: rps=80000.0 (overall: 79000.5) avg_msec=0.300 (overall: 0.310)\r") {
		t.Fatalf("progress line length %d, %v", n, err)
	}
	b.WriteString("\n")
	info := BenchInfo{Clients: 50, DataSize: 3, KeepAlive: 1, HaveConfig: true, Save: "3600 1 300 100 60 10000", AppendOnly: "no"}
	if err := BenchFull(&b, "SET", asTest(t, res, nil), info, 0); err != nil {
		t.Fatal(err)
	}
	info.Threads, info.HaveConfig = 4, false
	if err := BenchFull(&b, "GET", asTest(t, res, nil), info, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench.golden", b.Bytes())
}

func TestCFloatPrintsLikeC(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{math.NaN(): "-nan", math.Inf(1): "inf", 0.1234: "0.123"} {
		if got := cfloat(3, in); got != want {
			t.Errorf("cfloat(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestAutoPacingShowsItsQuantum(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		quantum  time.Duration
		text     string
		jsonUsec float64
	}{
		{600 * time.Microsecond, "auto pacing (600 µs quantum)", 600},
		{0, "auto pacing (precise)", 0},
	} {
		r := sample()
		r.Pacing, r.PacingQuantum = "auto", c.quantum
		var b bytes.Buffer
		if err := Text(&b, asTest(t, r, nil), TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "50 connections, "+c.text+"\n") {
			t.Errorf("text lacks %q:\n%s", c.text, b.String())
		}
		tt, err := fromResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if tt.Pacing != "auto" || tt.PacingQuantumUs == nil || *tt.PacingQuantumUs != c.jsonUsec {
			t.Errorf("JSON pacing %q, quantum %v µs, want auto, %v", tt.Pacing, tt.PacingQuantumUs, c.jsonUsec)
		}
	}
}
