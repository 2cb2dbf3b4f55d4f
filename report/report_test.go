package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/resulttest"
)

// The golden files are pins written by -update from this package's own
// output, not independent checks: see testdata/README.md.

func TestJSONGolden(t *testing.T) {
	t.Parallel()
	tt := asTest(t, resulttest.Sample(), nil)
	tt.ID = "set" // the command sets it (fromResult leaves it empty)
	doc := &Document{Schema: Schema, Mode: "open", Tool: Tool{Name: "pacer", Version: "test"},
		StartedAt: "2026-01-01T00:00:00Z", Config: map[string]any{"rate": 10000}, Tests: []Test{*tt}}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resulttest.Golden(t, "result.golden.json", b)
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
