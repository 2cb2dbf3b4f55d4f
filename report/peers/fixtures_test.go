package peers

import (
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

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
