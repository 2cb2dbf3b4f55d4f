package text

import (
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

// The fixtures of the tests that read this package's internals: the
// same results as report's own tests craft, built through report's API.

// asTest makes a result into a test as NewTest does, judged.
func asTest(t testing.TB, r *scheduler.Result) *report.Test {
	t.Helper()
	tt, _, err := verdict.NewTest(r, report.TestOptions{}, verdict.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// craft builds the test a run of f would have written.
func craft(t *testing.T, f report.SyntheticRun) report.Test {
	t.Helper()
	test, err := report.Synthetic(f)
	if err != nil {
		t.Fatal(err)
	}
	return test
}

// input reads doc back as pacer report would.
func input(t *testing.T, label string, doc *report.Document) report.Input {
	t.Helper()
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.ReadInput(label, b)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
