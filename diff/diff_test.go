package diff

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/verdict"
)

var quick = process{rate: 2000, intervals: 10, median: 200, sigma: 0.4}

// A run compared with itself: the same everywhere, every change and its
// interval exactly 0, and a gate passes.
func TestSameRunIsSame(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	d := doc(t, nil, quick.runs(t, rng, 1))
	g, err := ParseGate("p99:10%,p99.9:20%,throughput:5%,errors:0.1%")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Compare(side(input(t, "r.json", d)), side(input(t, "r.json", d)), Options{Gate: g, Spectrum: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tests) != 1 || out.Tests[0].Method != Identical {
		t.Fatalf("tests %+v", out.Tests)
	}
	for _, f := range append(out.Tests[0].Figures, out.Tests[0].Spectrum...) {
		if f.Word != string(stats.Same) || f.Change == nil || *f.Change != 0 || *f.Interval[0] != 0 || *f.Interval[1] != 0 {
			t.Errorf("%s: %s %v %v (%s)", f.Figure, f.Word, f.Change, f.Interval, f.Why)
		}
	}
	if Outcome(out) != verdict.Pass {
		t.Errorf("gate %+v", out.Gate)
	}
}

// Tests match by id; one that is only on one side, or whose rate or mode
// differs, is named and not compared; nothing matching is a usage error.
func TestMatch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	get := quick.run(t, rng)
	set := quick.run(t, rng)
	set.ID, set.Name = "set", "SET"
	incr := quick.run(t, rng)
	incr.ID, incr.Name = "incr", "INCR"
	slow := quick.run(t, rng)
	slow.ID, slow.Name = "set", "SET"
	half := 1000.0
	slow.TargetRate = &half
	closed := quick.run(t, rng)
	closed.ID, closed.Name, closed.Mode, closed.TargetRate = "incr", "INCR", "closed", nil
	a := input(t, "a.json", doc(t, nil, []report.Test{get}, []report.Test{set}, []report.Test{incr}))
	b := input(t, "b.json", doc(t, nil, []report.Test{slow}, []report.Test{get}, []report.Test{closed}))
	out, err := Compare(side(a), side(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tests) != 1 || out.Tests[0].ID != "get" {
		t.Fatalf("compared %+v", out.Tests)
	}
	var why []string
	for _, u := range out.Unmatched {
		why = append(why, u.Test+": "+u.Why)
	}
	got := strings.Join(why, "\n")
	for _, want := range []string{"SET: target rates differ (baseline 2000 req/s, candidate 1000 req/s)", "INCR: modes differ (baseline open, candidate closed)"} {
		if !strings.Contains(got, want) {
			t.Errorf("unmatched:\n%s\nwant %q", got, want)
		}
	}
	c := input(t, "c.json", doc(t, nil, []report.Test{set}))
	d := input(t, "d.json", doc(t, nil, []report.Test{incr}))
	_, err = Compare(side(c), side(d), Options{})
	if !errors.Is(err, ErrNoMatch) || !usage.Is(err) || !strings.Contains(err.Error(), "SET: only in the baseline") {
		t.Errorf("nothing matches: %v", err)
	}
}

// A sweep against a sweep compares step by step, by rate; a step only
// one sweep has is named.
func TestSweepStepByStep(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	step := func(rate float64, idx int) report.Test {
		r := quick.run(t, rng)
		r.TargetRate = &rate
		r.Step = &report.StepInfo{Index: idx, TargetRate: rate}
		return r
	}
	a := input(t, "a.json", doc(t, nil, []report.Test{step(1000, 0)}, []report.Test{step(2000, 1)}, []report.Test{step(4000, 2)}))
	b := input(t, "b.json", doc(t, nil, []report.Test{step(2000, 0)}, []report.Test{step(4000, 1)}, []report.Test{step(8000, 2)}))
	out, err := Compare(side(a), side(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for _, tt := range out.Tests {
		rates = append(rates, *tt.TargetRate)
	}
	if len(rates) != 2 || rates[0] != 2000 || rates[1] != 4000 || len(out.Unmatched) != 2 {
		t.Errorf("compared rates %v, unmatched %+v", rates, out.Unmatched)
	}
}

// A side its own verdict does not trust (its generator behind) cannot
// make a figure worse, better or the same on its response time alone:
// as the attribution of --slo has it, the word stands where the
// server's side, the service time, says it too. A change the
// generator's lateness made is cannot tell; one the server made is
// worse, and fails a gate.
func TestUntrustedSideNeedsTheServersSide(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	late := quick
	late.lagUs, late.verdict = 100, report.VerdictGeneratorBehind // the response time 50% higher, the service time as the baseline's
	slow := quick
	slow.median, slow.verdict = 1.5*quick.median, report.VerdictGeneratorBehind
	g, _ := ParseGate("p50:10%,throughput:5%,errors:0.1%")
	base := input(t, "a.json", doc(t, nil, quick.runs(t, rng, 3)))
	out, err := Compare(side(base), side(input(t, "late.json", doc(t, nil, late.runs(t, rng, 3)))), Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	f := figure(t, out.Tests[0], "p50")
	if f.Word != string(stats.CannotTell) || f.Service == nil || f.Service.Word != string(stats.Same) || !strings.Contains(f.Why, "the server's side does not say worse") {
		t.Errorf("the generator's lateness: p50 %s (%s), service %+v", f.Word, f.Why, f.Service)
	}
	if w := figure(t, out.Tests[0], "throughput").Word; w != string(stats.CannotTell) {
		t.Errorf("the generator's lateness: throughput %s", w)
	}
	if w := figure(t, out.Tests[0], "errors").Word; w != string(stats.Same) {
		t.Errorf("the generator's lateness: errors %s (errors are the server's answers)", w)
	}
	if Outcome(out) != verdict.Inconclusive {
		t.Errorf("the generator's lateness: gate %+v", out.Gate)
	}
	g, _ = ParseGate("p50:10%")
	out, err = Compare(side(base), side(input(t, "slow.json", doc(t, nil, slow.runs(t, rng, 3)))), Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	if f := figure(t, out.Tests[0], "p50"); f.Word != string(stats.Worse) || f.CandidateUntrusted == "" {
		t.Errorf("a slower server: p50 %s (%s)", f.Word, f.Why)
	}
	if Outcome(out) != verdict.Fail {
		t.Errorf("a slower server: gate %+v", out.Gate)
	}
	// One run a side: the service time's own block bootstrap.
	out, err = Compare(side(input(t, "a1.json", doc(t, nil, quick.runs(t, rng, 1)))), side(input(t, "slow1.json", doc(t, nil, slow.runs(t, rng, 1)))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := figure(t, out.Tests[0], "p50"); f.Method != "blocks" || f.Word != string(stats.Worse) || f.Service == nil || f.Service.Word != string(stats.Worse) {
		t.Errorf("a slower server, one run a side: p50 %s by %s (%s), service %+v", f.Word, f.Method, f.Why, f.Service)
	}
}

// A side its own verdict does not trust, without service times to
// attribute its change by, cannot tell and decides no gate.
func TestUntrustedSideCannotTell(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	slow := quick
	slow.median *= 1.5
	slow.verdict = report.VerdictGeneratorBehind
	runs := slow.runs(t, rng, 3)
	for i := range runs {
		runs[i].Histograms.Service = ""
		for k := range runs[i].Intervals {
			runs[i].Intervals[k].Histograms.Service = ""
		}
	}
	g, _ := ParseGate("p50:10%")
	out, err := Compare(side(input(t, "a.json", doc(t, nil, quick.runs(t, rng, 3)))), side(input(t, "b.json", doc(t, nil, runs))), Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	f := figure(t, out.Tests[0], "p50")
	if f.Word != string(stats.CannotTell) || !strings.Contains(f.Why, "generator_behind") || f.CandidateUntrusted == "" {
		t.Errorf("p50: %s (%s)", f.Word, f.Why)
	}
	if *f.ChangePct < 40 {
		t.Errorf("the change is still shown: %v%%", *f.ChangePct)
	}
	if Outcome(out) != verdict.Inconclusive || !strings.Contains(out.Gate.Reason, "untrusted") {
		t.Errorf("gate %+v", out.Gate)
	}
}

// A candidate whose client host was too noisy at a figure cannot fail the
// gate, nor make it worse, when its server's side did not change; its
// quiet figures still can. The candidate's response time is 150 µs longer
// through pacer's own lateness (send lag), its service time the
// baseline's.
func TestNoisyCandidateCannotFail(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	noisy := quick
	noisy.lagUs = 150
	noisy.hiccupUs = 150 // beyond a quarter of the p50 (350 µs), under that of the p99.9 (about 0.85 ms)
	g, _ := ParseGate("p50:10%,p99.9:10%")
	out, err := Compare(side(input(t, "a.json", doc(t, nil, quick.runs(t, rng, 3)))), side(input(t, "b.json", doc(t, nil, noisy.runs(t, rng, 3)))), Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	p50, p999 := figure(t, out.Tests[0], "p50"), figure(t, out.Tests[0], "p99.9")
	if p50.Word != string(stats.CannotTell) || !strings.Contains(p50.Why, "host hiccups p50") {
		t.Errorf("p50: %s (%s)", p50.Word, p50.Why)
	}
	if p999.Word != string(stats.Worse) {
		t.Errorf("p99.9: %s (%s)", p999.Word, p999.Why)
	}
	if Outcome(out) != verdict.Fail {
		t.Errorf("gate %+v", out.Gate)
	}
	var p50clause ClauseResult
	for _, c := range out.Gate.Clauses {
		if c.Clause == "p50:10%" {
			p50clause = c
		}
	}
	if p50clause.Outcome != "inconclusive" || !strings.Contains(p50clause.Why, "cannot fail the gate") {
		t.Errorf("p50's clause: %+v", p50clause)
	}
}

// A candidate as noisy whose service time (the server's side, which the
// client host's noise does not touch) is as surely slower is worse, and
// fails the gate, quoting the service time.
func TestNoisyCandidateWithASlowerServerFails(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	slower := quick
	slower.median *= 1.5
	slower.hiccupUs = 150
	g, _ := ParseGate("p50:10%")
	out, err := Compare(side(input(t, "a.json", doc(t, nil, quick.runs(t, rng, 3)))), side(input(t, "b.json", doc(t, nil, slower.runs(t, rng, 3)))), Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	p50 := figure(t, out.Tests[0], "p50")
	if p50.Word != string(stats.Worse) || p50.CandidateNoisy == "" || p50.Service == nil || p50.Service.Word != string(stats.Worse) {
		t.Errorf("p50: %s (%s), noisy %q, service %+v", p50.Word, p50.Why, p50.CandidateNoisy, p50.Service)
	}
	if Outcome(out) != verdict.Fail || !strings.Contains(out.Gate.Reason, "which that noise does not touch") {
		t.Errorf("gate %+v", out.Gate)
	}
}

// Too few samples beyond a percentile on a side: cannot tell.
func TestTooFewSamplesBeyond(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	small := quick
	small.rate, small.intervals = 500, 10 // 5,000 requests: 5 beyond p99.9
	out, err := Compare(side(input(t, "a.json", doc(t, nil, small.runs(t, rng, 2)))), side(input(t, "b.json", doc(t, nil, small.runs(t, rng, 2)))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := figure(t, out.Tests[0], "p99.9")
	if f.Word != string(stats.CannotTell) || !strings.Contains(f.Why, "samples beyond p99.9") {
		t.Errorf("p99.9: %s (%s)", f.Word, f.Why)
	}
}

// The two sides of one pacer ab pair up round by round.
func TestABSidesArePaired(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	a := input(t, "ab.a.json", doc(t, map[string]any{"ab": map[string]any{"session": "s1", "side": "a"}}, quick.runs(t, rng, 4)))
	b := input(t, "ab.b.json", doc(t, map[string]any{"ab": map[string]any{"session": "s1", "side": "b"}}, quick.runs(t, rng, 4)))
	other := input(t, "x.b.json", doc(t, map[string]any{"ab": map[string]any{"session": "s2", "side": "b"}}, quick.runs(t, rng, 4)))
	for _, c := range []struct {
		base, cand report.Input
		want       string
	}{{a, b, string(stats.PairedRuns)}, {b, a, string(stats.PairedRuns)}, {a, other, string(stats.Runs)}} {
		out, err := Compare(side(c.base), side(c.cand), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Tests[0].Method; got != c.want {
			t.Errorf("%s against %s: %s, want %s", c.base.Label, c.cand.Label, got, c.want)
		}
	}
}

// The files of a pacer ab session that ran rounds past its planned ones
// until its gate decided (--decide-within) are paired as any session's,
// and the test's note says their 95% intervals overstate the confidence;
// the session's own comparison, which carries its looks (Options.Decide),
// says nothing of it, nor do files that ran no more than planned.
func TestSequentialSessionFilesAreNoted(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	cfg := func(s string, planned int) map[string]any {
		return map[string]any{"ab": map[string]any{"session": "s1", "side": s, "rounds": float64(planned), "decide_within_s": 120.0}}
	}
	runs := [2][]report.Test{quick.runs(t, rng, 6), quick.runs(t, rng, 6)}
	for _, c := range []struct {
		planned int
		decide  map[string]*Decide
		noted   bool
	}{{4, nil, true}, {6, nil, false}, {4, map[string]*Decide{"get": {Level: 0.99, Rounds: 6, PlannedRounds: 4, Looks: 2, PlannedLooks: 3}}, false}} {
		a := input(t, "ab.a.json", doc(t, cfg("a", c.planned), runs[0]))
		b := input(t, "ab.b.json", doc(t, cfg("b", c.planned), runs[1]))
		out, err := Compare(side(a), side(b), Options{Decide: c.decide})
		if err != nil {
			t.Fatal(err)
		}
		tt := out.Tests[0]
		if tt.Method != string(stats.PairedRuns) || strings.Contains(tt.Note, "--decide-within") != c.noted || (c.decide != nil) != (tt.Decide != nil) {
			t.Errorf("planned %d, decide %v: method %s, note %q, decide %+v", c.planned, c.decide != nil, tt.Method, tt.Note, tt.Decide)
		}
	}
}

// memtier_benchmark's JSON, read by report/peers' reader: a file with itself
// is the same; one run a side cannot tell its percentiles (its
// per-second series holds no histograms) but its throughput can; two
// files a side compare as runs.
func TestMemtier(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "report", "testdata", "memtier.json"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(label string) report.Input {
		in, err := peers.ReadInput(label, data)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	out, err := Compare(side(read("m.json")), side(read("m.json")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range out.Tests {
		if tt.Method != Identical {
			t.Errorf("%s: %s", tt.Name, tt.Method)
		}
	}
	out, err = Compare(side(read("m1.json"), read("m2.json")), side(read("m3.json"), read("m4.json")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range out.Tests {
		if tt.Method != Identical {
			t.Errorf("%s with the same runs on both sides: %s", tt.Name, tt.Method)
		}
	}
}

func TestParseGate(t *testing.T) {
	t.Parallel()
	g, err := ParseGate(" p99:10% , p99.9:20%,throughput:5%,errors:0.1%")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.clauses) != 4 || g.clauses[0].allow != 0.1 || g.clauses[3].allow != 0.1 || g.clauses[3].f.kind != errorRate {
		t.Errorf("clauses %+v", g.clauses)
	}
	for _, bad := range []string{"", "p99", "p99:10", "p100:5%", "p0:5%", "pX:5%", "latency:5%", "p99:-1%", "p99:NaN%", "p99:5%,p99:6%", "p99:1e400%", "errors:x%"} {
		if _, err := ParseGate(bad); err == nil || !usage.Is(err) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The gate on crafted intervals: beyond, within and straddling an
// allowance, lower throughput as worse, errors in points, and the sides'
// trust.
func TestGateDecide(t *testing.T) {
	t.Parallel()
	rel := func(name string, lo, hi float64) Figure {
		est := (lo + hi) / 2
		return Figure{Figure: name, Unit: "ms", ChangePct: &est, IntervalPct: Ends(lo, hi), Word: "cannot tell"}
	}
	abs := func(lo, hi float64) Figure {
		est := (lo + hi) / 2
		return Figure{Figure: "errors", Unit: "%", Change: &est, Interval: Ends(lo, hi), Word: "cannot tell"}
	}
	thr := func(lo, hi float64) Figure {
		f := rel("throughput", lo, hi)
		f.Unit = "req/s"
		return f
	}
	// A side whose hiccups and receive lag add 0.5 ms to a 1 ms figure.
	noisy := func(f Figure, base bool) Figure {
		one, half := 1.0, 0.5
		f.Baseline = &one
		if base {
			f.BaselineNoisy, f.BaselineNoiseMs = "host hiccups", &half
		} else {
			f.CandidateNoisy, f.CandidateNoiseMs = "host hiccups", &half
		}
		return f
	}
	paired := func(f Figure) Figure {
		f.Method = "paired-runs"
		return f
	}
	// untrusted makes the candidate untrusted by its own verdict, with
	// its service time's change in [lo, hi] %.
	untrusted := func(f Figure, lo, hi float64) Figure {
		f.CandidateUntrusted = "verdict generator_behind in run 1 of 6"
		est := (lo + hi) / 2
		f.Service = &Service{ChangePct: &est, IntervalPct: Ends(lo, hi)}
		return f
	}
	// quieter gives the baseline a tenth of the candidate's noise.
	quieter := func(f Figure) Figure {
		tenth := *f.CandidateNoiseMs / 10
		f.BaselineNoiseMs = &tenth
		return f
	}
	for _, c := range []struct {
		name string
		gate string
		figs []Figure
		want verdict.Outcome
	}{
		{"beyond", "p99:10%", []Figure{rel("p99", 12, 30)}, verdict.Fail},
		{"within", "p99:10%", []Figure{rel("p99", -5, 8)}, verdict.Pass},
		{"straddles", "p99:10%", []Figure{rel("p99", 5, 15)}, verdict.Inconclusive},
		{"unbounded above", "p99:10%", []Figure{rel("p99", 12, 1e300*10)}, verdict.Fail},
		{"lower throughput", "throughput:5%", []Figure{thr(-20, -8)}, verdict.Fail},
		{"higher throughput", "throughput:5%", []Figure{thr(2, 9)}, verdict.Pass},
		{"errors in points", "errors:0.1%", []Figure{abs(0.2, 0.5)}, verdict.Fail},
		{"errors within", "errors:0.1%", []Figure{abs(-0.01, 0.05)}, verdict.Pass},
		{"one beyond, one unsure: fail", "p50:10%,p99:10%", []Figure{rel("p50", 5, 15), rel("p99", 12, 30)}, verdict.Fail},
		{"noisy candidate cannot fail", "p99:10%", []Figure{noisy(rel("p99", 12, 30), false)}, verdict.Inconclusive},
		{"noisy candidate can pass", "p99:10%", []Figure{noisy(rel("p99", -5, 8), false)}, verdict.Pass},
		{"noisy baseline cannot pass", "p99:10%", []Figure{noisy(rel("p99", -5, 8), true)}, verdict.Inconclusive},
		{"noisy baseline can fail", "p99:10%", []Figure{noisy(rel("p99", 12, 30), true)}, verdict.Fail},
		{"beyond by more than the noise", "p99:10%", []Figure{noisy(rel("p99", 80, 120), false)}, verdict.Fail},
		{"noisy baseline of interleaved rounds", "p99:10%", []Figure{paired(noisy(rel("p99", -5, 8), true))}, verdict.Pass},
		// In interleaved rounds the host's noise falls on both sides: only
		// the candidate's beyond the baseline's could account for a miss.
		{"both noisy alike in interleaved rounds", "p99:10%", []Figure{paired(noisy(noisy(rel("p99", 12, 30), false), true))}, verdict.Fail},
		{"noisy candidate of interleaved rounds", "p99:10%", []Figure{paired(noisy(rel("p99", 12, 30), false))}, verdict.Inconclusive},
		{"candidate noisier than the baseline in interleaved rounds", "p99:10%", []Figure{paired(quieter(noisy(rel("p99", 12, 30), false)))}, verdict.Inconclusive},
		// A side its own verdict does not trust fails where the server's
		// side fails too, and passes nowhere, whatever its service time.
		{"untrusted candidate, service beyond too", "p99:10%", []Figure{untrusted(rel("p99", 12, 30), 15, 40)}, verdict.Fail},
		{"untrusted candidate, service within", "p99:10%", []Figure{untrusted(rel("p99", 12, 30), -5, 8)}, verdict.Inconclusive},
		{"untrusted candidate cannot pass", "p99:10%", []Figure{untrusted(rel("p99", -40, 8), -30, 5)}, verdict.Inconclusive},
		{"no interval", "p99:10%", []Figure{{Figure: "p99", Unit: "ms", Word: "cannot tell", Why: "no latencies"}}, verdict.Inconclusive},
		{"figure missing", "p99.9:10%", []Figure{rel("p99", -5, 8)}, verdict.Inconclusive},
	} {
		g, err := ParseGate(c.gate)
		if err != nil {
			t.Fatal(err)
		}
		d := &Document{Tests: []Test{{Name: "GET", Figures: c.figs}}}
		got := g.Decide(d)
		if got.Outcome != c.want.String() || got.Reason == "" {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Outcome, got.Reason, c.want)
		}
	}
}

// Interleaved rounds put the client host's noise on both sides alike: a
// change that holds across them is the server's, however noisy the host.
func TestPairedRoundsNoiseOnBothSides(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	base, slow := quick, quick
	base.hiccupUs, slow.hiccupUs, slow.median = 150, 150, 1.5*quick.median
	cfg := func(s string) map[string]any { return map[string]any{"ab": map[string]any{"session": "s", "side": s}} }
	a := input(t, "ab.a.json", doc(t, cfg("a"), base.runs(t, rng, 4)))
	b := input(t, "ab.b.json", doc(t, cfg("b"), slow.runs(t, rng, 4)))
	out, err := Compare(side(a), side(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := figure(t, out.Tests[0], "p50"); f.CandidateNoisy == "" || f.Word != string(stats.Worse) {
		t.Errorf("p50 of noisy interleaved rounds: %s (%s), noisy %q", f.Word, f.Why, f.CandidateNoisy)
	}
}

// A round in which one side's own verdict did not trust its run is left
// out with the other side's run of that round, and the other rounds are
// compared as they are; with too few trusted rounds left, none is left out
// and the untrusted side is judged as a whole: never the same, never a
// pass.
func TestPairedRoundsLeaveOutUntrustedRounds(t *testing.T) {
	t.Parallel()
	cfg := func(s string) map[string]any { return map[string]any{"ab": map[string]any{"session": "s", "side": s}} }
	behind := quick
	behind.verdict, behind.lagUs = report.VerdictGeneratorBehind, 2000
	for _, c := range []struct {
		name     string
		untrust  []int // rounds (0-based) of the candidate whose run is behind
		wantLeft []int
	}{
		{"one of six", []int{1}, []int{2}},
		{"two of six", []int{0, 4}, []int{1, 5}},
		{"four of six: too few left", []int{0, 1, 2, 3}, nil},
	} {
		rng := rand.New(rand.NewPCG(9, 9))
		as, bs := quick.runs(t, rng, 6), quick.runs(t, rng, 6)
		for _, i := range c.untrust {
			bs[i] = behind.run(t, rng)
		}
		a := input(t, "ab.a.json", doc(t, cfg("a"), as))
		b := input(t, "ab.b.json", doc(t, cfg("b"), bs))
		gate, err := ParseGate("p50:10%")
		if err != nil {
			t.Fatal(err)
		}
		out, err := Compare(side(a), side(b), Options{Gate: gate})
		if err != nil {
			t.Fatal(err)
		}
		tt := out.Tests[0]
		if !slices.Equal(tt.RoundsLeftOut, c.wantLeft) {
			t.Errorf("%s: rounds left out %v, want %v", c.name, tt.RoundsLeftOut, c.wantLeft)
		}
		p50 := figure(t, tt, "p50")
		if c.wantLeft == nil {
			if p50.CandidateUntrusted == "" || tt.Note != "" {
				t.Errorf("%s: the candidate's untrusted rounds were not judged as a whole: untrusted %q, note %q", c.name, p50.CandidateUntrusted, tt.Note)
			}
			// Judged as a whole, an untrusted side is never the same,
			// and never passes the gate, whatever its service time.
			if p50.Word == string(stats.Same) || out.Gate.Outcome == "pass" {
				t.Errorf("%s: p50 %s (%s), gate %s: want neither same nor a pass from an untrusted side", c.name, p50.Word, p50.Why, out.Gate.Outcome)
			}
			continue
		}
		kept := 6 - len(c.wantLeft)
		if tt.NCandidate != kept || p50.NBaseline != kept || !strings.Contains(tt.Note, "left out") {
			t.Errorf("%s: n %d/%d, note %q", c.name, tt.NCandidate, p50.NBaseline, tt.Note)
		}
		// The rounds kept are all trusted: the 2 ms of lag is gone, and
		// identical servers are the same at p50.
		if p50.CandidateUntrusted != "" || p50.Word != string(stats.Same) {
			t.Errorf("%s: p50 %s (%s), untrusted %q", c.name, p50.Word, p50.Why, p50.CandidateUntrusted)
		}
	}
}

// TestPairedWidthNamesTheClientsNoise: when paired rounds spread too
// widely to decide, and in some of them the client host's own noise at
// the percentile was a material share of the figure, the reason says so
// (a quieter host narrows it); with a quiet client it asks for rounds.
func TestPairedWidthNamesTheClientsNoise(t *testing.T) {
	t.Parallel()
	cfg := func(s string) map[string]any { return map[string]any{"ab": map[string]any{"session": "s", "side": s}} }
	spread := quick
	spread.runSigma, spread.hiccupUs = 0.3, 10
	loud := spread
	loud.hiccupUs = 2000 // beyond a quarter of the p99 (about 0.5 ms)
	for _, c := range []struct {
		name  string
		noisy []int // rounds (0-based) whose candidate run had the loud host
		want  string
	}{
		{"two noisy rounds", []int{1, 3}, "in 2 of the 6 rounds the client host's own noise at p99"},
		{"a quiet client", nil, "too few rounds for the spread seen between them (more --rounds narrow it)"},
	} {
		rng := rand.New(rand.NewPCG(4, 4))
		as, bs := spread.runs(t, rng, 6), spread.runs(t, rng, 6)
		for _, i := range c.noisy {
			bs[i] = loud.run(t, rng)
		}
		out, err := Compare(side(input(t, "ab.a.json", doc(t, cfg("a"), as))), side(input(t, "ab.b.json", doc(t, cfg("b"), bs))), Options{})
		if err != nil {
			t.Fatal(err)
		}
		p99 := figure(t, out.Tests[0], "p99")
		if p99.Method != string(stats.PairedRuns) || p99.Word != string(stats.CannotTell) || !strings.Contains(p99.Why, c.want) {
			t.Errorf("%s: %s %s (%s); want cannot tell, %q", c.name, p99.Method, p99.Word, p99.Why, c.want)
		}
	}
}

// TestCompareRefusesCSV: redis-benchmark --csv holds neither histograms
// nor counts, on either side: a usage error naming the file.
func TestCompareRefusesCSV(t *testing.T) {
	csv := report.Input{Label: "rb.csv", Format: report.FormatRedisBenchmarkCSV, Doc: &report.Document{}}
	pacer := report.Input{Label: "a.json", Format: report.FormatPacer, Doc: &report.Document{}}
	for _, sides := range [][2]Side{{{Inputs: []report.Input{pacer}}, {Inputs: []report.Input{csv}}}, {{Inputs: []report.Input{csv}}, {Inputs: []report.Input{pacer}}}} {
		_, err := Compare(sides[0], sides[1], Options{})
		if !usage.Is(err) || !strings.Contains(err.Error(), "rb.csv: redis-benchmark --csv holds no histograms") {
			t.Errorf("err %v, want a usage error naming rb.csv", err)
		}
	}
}
