package peers

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
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
		t.Fatalf("%v (run go test ./report/peers -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// asTest makes a result into a test as NewTest does, judged.
func asTest(t testing.TB, r *scheduler.Result) *report.Test {
	t.Helper()
	tt, _, err := verdict.NewTest(r, report.TestOptions{}, verdict.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// hostileDoc is a document of one open GET test.
func hostileDoc(t *testing.T) *report.Document {
	t.Helper()
	test, err := report.Synthetic(report.SyntheticRun{Name: "GET", Mode: "open", Rate: 2000, Seconds: 1, Base: 0.2, Interval: 0.25, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	return report.SyntheticDocument("open", test)
}
