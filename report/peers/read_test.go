package peers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/report"
)

func TestReadInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := `{"schema": "` + report.Schema + `", "tests": []}`
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("a.json", doc), write("x/r.json", doc), write("y/r.json", "\n\t "+doc)
	in, err := ReadInputs(t.Context(), []string{a, b, c, "-"}, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, x := range in {
		labels = append(labels, x.Label)
	}
	if want := []string{"a.json", b, c, "stdin"}; strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", labels, want)
	}
	for _, tc := range []struct {
		paths []string
		stdin string
		want  string
	}{
		{[]string{"-", "-"}, doc, "- (stdin) given twice"},
		{[]string{"-"}, "", "-: empty: not a result document"},
		{[]string{"-"}, "  [1]", "-: not a result document (a JSON object written by --json, or redis-benchmark --csv)"},
		{[]string{write("bad.json", `{"schema": "other"}`)}, "", "not a pacer result"},
		{[]string{filepath.Join(dir, "none.json")}, "", "none.json: open"},
	} {
		_, err := ReadInputs(t.Context(), tc.paths, strings.NewReader(tc.stdin))
		if err == nil || !strings.Contains(usagetest.CLI(err), tc.want) || !usage.Is(err) {
			t.Errorf("%q: %v, want a usage error with %q", tc.paths, err, tc.want)
		}
	}
}

// TestInputsBoundedInAll: what ReadInputs reads (pacer report, pacer
// merge) is bounded in all, not only per file. It lowers the package's
// bound, so it does not run in parallel with the tests that read (the
// race detector caught TestMemtierSeriesIsMerged reading it in .ci/run).
func TestInputsBoundedInAll(t *testing.T) {
	b, err := hostileDoc(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(v int64) { maxInputTotal = v }(maxInputTotal)
	maxInputTotal = int64(len(b)) * 3 / 2
	if _, err := ReadInputs(context.Background(), []string{path}, nil); err != nil {
		t.Fatalf("one file within the bound: %v", err)
	}
	_, err = ReadInputs(context.Background(), []string{path, path}, nil)
	if err == nil || !strings.Contains(err.Error(), "in all") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("two files beyond the bound: %v", err)
	}
}

// TestReadSizesItsBufferOnce: a large file is read into one buffer of its
// size (with io.ReadAll's doublings, reading 250 MB of first_error took
// 836 MB of memory; 519 MB with one buffer).
func TestReadSizesItsBufferOnce(t *testing.T) {
	testrun.SkipShort(t, "writes and reads a 32 MB file")
	testrun.SkipRace(t, "it allocates beside the buffer measured")
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, append([]byte(`{"x":"`), bytes.Repeat([]byte("<"), size)...), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b []byte
	grew := testrun.Allocated(func() { b, _, err = readLimited("big.json", f, report.MaxDocumentSize) })
	if err != nil || len(b) != size+6 {
		t.Fatalf("read %d bytes: %v", len(b), err)
	}
	t.Logf("reading %d MB allocated %d MB", size>>20, grew>>20)
	if grew > size*5/4 {
		t.Errorf("reading %d MB allocated %d MB", size>>20, grew>>20)
	}
}
