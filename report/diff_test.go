package report

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
