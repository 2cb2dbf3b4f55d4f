package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

// diffFixture is a comparison as package diff writes one: a test whose
// percentiles got 30% slower, with a spectrum, a figure that cannot
// tell, a test not compared and a gate; a name with markup.
func diffFixture() *Diff {
	v := func(x float64) *float64 { return &x }
	fig := func(p float64, name string, base, cand float64, word string) DiffFigure {
		ch := cand - base
		pct := 100 * ch / base
		return DiffFigure{Figure: name, P: p, Unit: "ms", Baseline: v(base), Candidate: v(cand),
			BaselineInterval: DiffEnds(base*0.95, base*1.05), CandidateInterval: DiffEnds(cand*0.95, cand*1.05),
			Change: v(ch), ChangePct: v(pct), Interval: DiffEnds(ch-0.1*base, ch+0.1*base), IntervalPct: DiffEnds(pct-10, pct+10),
			Word: word, Method: "runs", NBaseline: 3, NCandidate: 3}
	}
	var spectrum []DiffFigure
	for i, p := range []float64{10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99} {
		spectrum = append(spectrum, fig(p, PercentileLabel(p), 0.1*float64(i+1), 0.13*float64(i+1), "worse"))
	}
	spectrum[len(spectrum)-1].IntervalPct[1] = nil // unbounded above
	spectrum[len(spectrum)-1].Word, spectrum[len(spectrum)-1].Why = "cannot tell", "too few samples"
	thr := DiffFigure{Figure: "throughput", Unit: "req/s", Baseline: v(5000), Candidate: v(4999), Change: v(-1), ChangePct: v(-0.02),
		Interval: DiffEnds(-3, 2), IntervalPct: DiffEnds(-0.06, 0.04), Word: "same", Method: "runs", NBaseline: 3, NCandidate: 3}
	errs := DiffFigure{Figure: "errors", Unit: "%", Baseline: v(0), Candidate: v(0), Change: v(0), Interval: DiffEnds(0, 0), Word: "same", Method: "runs"}
	rate := 5000.0
	return &Diff{Schema: DiffSchema, Tool: Tool{Name: "pacer", Version: "test"},
		Baseline:  DiffSide{Label: "before.json", Files: []string{"before.json"}, Tool: "pacer test"},
		Candidate: DiffSide{Label: "after.json", Files: []string{"after.json"}, Tool: "pacer test", Target: "redis://:xxxxx@127.0.0.1:6380"},
		Level:     0.95, EquivalencePct: 5, ErrorEquivalencePct: 0.1,
		Tests: []DiffTest{{ID: "get", Name: `GET <b>"x"</b>`, Mode: "open", TargetRate: &rate, Method: "runs", NBaseline: 3, NCandidate: 3,
			Figures:  []DiffFigure{spectrum[2], spectrum[6], spectrum[10], thr, errs},
			Spectrum: spectrum}},
		Unmatched: []DiffUnmatched{{Test: "SET", Why: "only in the baseline"}},
		Gate: &DiffGate{Spec: "p99:10%", Outcome: "fail", Reason: "p99 of GET: +30.0% [+20.0%, +40.0%] is surely beyond the 10% allowance",
			Clauses: []DiffClause{{Test: "GET", Clause: "p99:10%", Outcome: "fail", Why: "…"}}},
	}
}

func TestDiffText(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := DiffText(&b, diffFixture()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	testrun.Contains(t, out,
		"baseline:  before.json, pacer test",
		"candidate: after.json (redis://:xxxxx@127.0.0.1:6380), pacer test",
		`====== GET <b>"x"</b> ====== open, 5000 req/s; 3 runs against 3 runs (the spread between runs)`,
		"p50 (ms)                    0.300        0.390      +0.090 (+30.0%)      [+20.0%, +40.0%]  worse",
		"p99.99 (ms)", "[+20.0%, …]  cannot tell",
		"throughput (req/s)        5000.00      4999.00        -1.00 (-0.0%)        [-0.1%, +0.0%]  same",
		"errors (%)                  0.000        0.000               +0.000      [+0.000, +0.000]  same",
		"cannot tell:\n  p99.99: too few samples",
		"Not compared:\n  SET: only in the baseline",
		"gate --max-regression p99:10%: fail: p99 of GET",
	)
	// The table's columns line up: every figure's word starts at one
	// column.
	var at []int
	for l := range strings.Lines(out) {
		if !strings.Contains(l, " (ms) ") && !strings.Contains(l, " (req/s) ") && !strings.Contains(l, " (%) ") {
			continue
		}
		l = strings.TrimRight(l, "\n")
		for _, w := range []string{"worse", "better", "same", "cannot tell"} {
			if strings.HasSuffix(l, "  "+w) {
				at = append(at, len([]rune(strings.TrimSuffix(l, w))))
			}
		}
	}
	if len(at) != 5 || slices.Min(at) != slices.Max(at) {
		t.Errorf("the words start at columns %v:\n%s", at, out)
	}
}

func TestReadDiffRoundTrip(t *testing.T) {
	t.Parallel()
	d := diffFixture()
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !IsDiff(b) || IsDiff([]byte(`{"schema":"pacer.result/v1"}`)) {
		t.Fatal("IsDiff")
	}
	back, err := ReadDiff(b)
	if err != nil {
		t.Fatal(err)
	}
	var x, y bytes.Buffer
	DiffText(&x, d)
	DiffText(&y, back)
	if x.String() != y.String() {
		t.Errorf("read back, the text differs:\n%s\nwant\n%s", y.String(), x.String())
	}
	for _, bad := range []string{
		`{"schema":"pacer.diff/v1","tests":[{"figures":[{"word":"maybe"}]}]}`,
		`{"schema":"pacer.diff/v1","tests":[{"figures":[{"word":"same","interval":[1]}]}]}`,
		`{"schema":"pacer.diff/v2"}`,
		`{"schema":`,
	} {
		if _, err := ReadDiff([]byte(bad)); err == nil {
			t.Errorf("%s: read", bad)
		}
	}
}
