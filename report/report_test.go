package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
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
