package text

import (
	"bytes"
	"testing"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base, v float64
		want    string
	}{
		{1, 1.5, "+0.500 (+50.0%)"},
		{2, 1, "-1.000 (-50.0%)"},
		{0, 1, "+1.000"},
		{1, 1, "+0.000 (+0.0%)"},
	} {
		if got := changeText(c.base, c.v); got != c.want {
			t.Errorf("changeText(%v, %v) = %q, want %q", c.base, c.v, got, c.want)
		}
	}
}

func TestSideBySide(t *testing.T) {
	t.Parallel()
	a := report.SyntheticDocument("open",
		reporttest.Craft(t, report.SyntheticRun{Name: "GET", Mode: "open", Rate: 1000, Seconds: 1, Base: 0.1, Interval: 1, Seed: 1}),
		reporttest.Craft(t, report.SyntheticRun{Name: "SET", Mode: "open", Rate: 1000, Seconds: 1, Base: 0.1, Interval: 1, Seed: 2}))
	b := report.SyntheticDocument("closed",
		reporttest.Craft(t, report.SyntheticRun{Name: "GET", Mode: "closed", Rate: 1000, Seconds: 1, Base: 0.2, Interval: 1, Seed: 3}),
		reporttest.Craft(t, report.SyntheticRun{Name: "LPUSH", Mode: "closed", Rate: 1000, Seconds: 1, Base: 0.2, Interval: 1, Seed: 4}))
	ia, ib := reporttest.Input(t, "a.json", a), reporttest.Input(t, "b.json", b)
	var out bytes.Buffer
	if err := SideBySide(&out, []report.Input{ia, ib}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	p50a, p50b := a.Tests[0].ResponseMs.P50, b.Tests[0].ResponseMs.P50
	testrun.Contains(t, s,
		"[1] a.json: pacer test, open mode, 2 tests",
		"[2] b.json: pacer test, closed mode, 2 tests",
		"====== GET ======", "[2]-[1] ms (%)",
		changeText(p50a, p50b),
		"No counterpart:", "SET: only in [1]", "LPUSH: only in [2]",
		"they say nothing about the run-to-run spread",
	)
}
