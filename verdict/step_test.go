package verdict

import (
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// TestOpenSweep: the outcome of an open sweep (its exit code) reads the
// outcome of the steps that bound its result (no clock, crafted steps).
func TestOpenSweep(t *testing.T) {
	yes, no := true, false
	pt := func(rate float64, pass *bool, o Outcome) SweepStep {
		return SweepStep{Rate: rate, StepJudgement: StepJudgement{Pass: pass, Outcome: o, Shown: -1}, Test: &report.Test{Name: "get", VerdictReason: "why"}}
	}
	for _, c := range []struct {
		name  string
		steps []SweepStep
		slo   bool
		best  float64
		want  Outcome
	}{
		{"found, the failure above is the server's", []SweepStep{pt(1000, &yes, Pass), pt(2000, &no, Fail)}, true, 1000, Pass},
		{"found, the failure above could be the generator's", []SweepStep{pt(1000, &yes, Pass), pt(2000, &no, Inconclusive)}, true, 1000, Inconclusive},
		{"found, one of two failures there is the server's", []SweepStep{pt(1000, &yes, Pass), pt(2000, &no, Inconclusive), pt(2000, &no, Fail)}, true, 1000, Pass},
		{"an untrusted failure far above the bracket does not matter", []SweepStep{pt(1000, &yes, Pass), pt(1500, &no, Fail), pt(4000, &no, Inconclusive)}, true, 1000, Pass},
		{"found at the top, nothing failed", []SweepStep{pt(1000, &yes, Pass)}, true, 1000, Pass},
		{"none met, the server's", []SweepStep{pt(1000, &no, Fail), pt(250, &no, Fail)}, true, 0, Fail},
		{"none met, the lowest failure could be the generator's", []SweepStep{pt(1000, &no, Fail), pt(250, &no, Inconclusive)}, true, 0, Inconclusive},
		{"target lost", []SweepStep{pt(1000, &no, Error)}, true, 0, Error},
		{"no slo, all ok", []SweepStep{pt(1000, nil, Pass), pt(2000, nil, Pass)}, false, 0, Pass},
		// A point with too few samples for a percentile clause is neither
		// pass nor fail (pass nil): below a sustainable rate it changes
		// nothing; a search that found none exits 3 as without it.
		{"unjudged below a sustainable rate", []SweepStep{pt(250, nil, Pass), pt(1000, &yes, Pass), pt(2000, &no, Fail)}, true, 1000, Pass},
		{"unjudged, none met", []SweepStep{pt(1000, &no, Fail), pt(250, nil, Pass)}, true, 0, Fail},
		{"only unjudged", []SweepStep{pt(250, nil, Pass)}, true, 0, Fail},
		{"no slo, a step behind", []SweepStep{pt(1000, nil, Pass), pt(2000, nil, Inconclusive)}, false, 0, Inconclusive},
	} {
		got, notes := OpenSweep(c.steps, c.slo, c.best, false)
		if got != c.want {
			t.Errorf("%s: outcome %d, want %d (notes %q)", c.name, got, c.want, notes)
		}
		if c.want == Inconclusive && !strings.Contains(strings.Join(notes, "\n"), "inconclusive") {
			t.Errorf("%s: notes %q do not say why", c.name, notes)
		}
	}
}

// TestStep: a step is decided by the 95% interval of each
// percentile clause (pass: within the bound, fail: beyond it, uncertain:
// holding it), by whose a miss was (the client's: inconclusive), by its
// trend and its samples (crafted results, no clock).
func TestStep(t *testing.T) {
	testrun.SkipRace(t, "one goroutine's arithmetic on crafted results, which the detector only slows")
	const ms, us = time.Millisecond, time.Microsecond
	flat := func(s, l time.Duration) func(int) (time.Duration, time.Duration) {
		return func(int) (time.Duration, time.Duration) { return s, l }
	}
	// k of every 1000 requests take slow, the others fast.
	tail := func(k int, fast, slow time.Duration) func(int) (time.Duration, time.Duration) {
		return func(i int) (time.Duration, time.Duration) {
			if i%1000 < k {
				return slow, 10 * us
			}
			return fast, 10 * us
		}
	}
	rising := &report.StepTrend{Intervals: 5, P50S: 10, P50P: 0.0083, InFlightS: 10, InFlightP: 0.0083, Alpha: 0.01, Rising: true}
	for _, c := range []struct {
		name     string
		slo      string
		n        int
		f        func(int) (time.Duration, time.Duration)
		adjust   func(*scheduler.Result)
		facts    StepFacts
		decision StepDecision
		pass     *bool
		outcome  Outcome
		interval StepDecision // the shown interval's decision ("": none shown)
		why      string       // a phrase of why
	}{
		{name: "well within", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), decision: StepPass, pass: ptr(true), outcome: Pass, interval: StepPass},
		{name: "well beyond, the server's", slo: "p99<=1ms", n: 2000, f: flat(2*ms, 10*us), decision: StepFail, pass: ptr(false), outcome: Fail, interval: StepFail},
		// p99 of 2000 with 18 slow ones (0.9%) is fast, but the interval
		// reaches the slow ones: not a sure pass.
		{name: "a pass the interval cannot support", slo: "p99<=1ms", n: 2000, f: tail(9, 500*us, 3*ms), decision: StepUncertain, outcome: Inconclusive, interval: StepUncertain, why: "holds its 1.00 ms bound"},
		// 12 slow of 1000 (1.2%): the p99 is slow, the interval reaches
		// the fast ones.
		{name: "a failure the interval cannot support", slo: "p99<=1ms", n: 2000, f: tail(12, 500*us, 3*ms), decision: StepUncertain, outcome: Inconclusive, interval: StepUncertain, why: "uncertain"},
		// The issue's `pass (service)`: response p99 6.9 ms on a 5 ms
		// bound, the server's side 1 ms: the send lag's miss is the
		// client's, neither a pass nor the server's failure.
		{name: "the client's miss is no pass", slo: "p99<=5ms", n: 2000, f: flat(ms, 5900*us), decision: StepInconclusive, outcome: Inconclusive, interval: StepFail, why: "inconclusive: p99<=5ms: the server's side met it"},
		// The server's side missed too, but the host's hiccups (1.5 ms
		// each) could have added all of it: too busy to tell.
		{name: "a host too busy to tell", slo: "p99<=1ms", n: 2000, f: flat(2*ms, 10*us), adjust: func(r *scheduler.Result) {
			r.Hiccups = histo.New()
			_ = r.Hiccups.RecordValues(int64(1500*us), 2000)
		}, decision: StepInconclusive, outcome: Inconclusive, interval: StepFail, why: "misses 1.000 ms, but the client host was too busy to tell whose it is: host hiccups 1.500 ms"},
		// The server's process waited for a CPU that pacer and it alone
		// kept busy: beyond what the setup sustains, a failure for the
		// search, though not the server's own.
		{name: "the host saturated by the test", slo: "p99<=1ms", n: 2000, f: flat(2*ms, 10*us), adjust: func(r *scheduler.Result) {
			r.CPU = scheduler.HostCPU{Available: true, Seconds: 2, Busy: 0.6, Self: 0.45, CPUs: 2}
			r.TargetLocal, r.ReceiveClock = true, scheduler.ReceiveKernel
			r.ServerProcess = &scheduler.ServerProcess{ServerProcess: host.ServerProcess{PID: 42, Name: "pacer", How: "test"},
				Usage: host.ProcUsage{Seconds: 2, CPU: 1500 * ms, Wait: 1780 * ms, ThreadWait: 400 * ms, Slices: 2000, Threads: 10}}
			for i := range r.Intervals {
				share := r.Intervals[i].Duration.Seconds() / 2
				u := r.ServerProcess.Usage
				r.Intervals[i].ServerProcess = &host.ProcUsage{Seconds: share * u.Seconds, CPU: time.Duration(share * float64(u.CPU)),
					Wait: time.Duration(share * float64(u.Wait)), ThreadWait: time.Duration(share * float64(u.ThreadWait)), Slices: 100, Threads: 10}
			}
		}, decision: StepSaturated, pass: ptr(false), outcome: Fail, interval: StepFail, why: "beyond what this setup sustains: "},
		// A queue that grows fails a step that meets its percentiles.
		{name: "unsustainable", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), facts: StepFacts{Trend: rising}, decision: StepUnsustainable, pass: ptr(false), outcome: Fail, interval: StepPass, why: "Mann–Kendall"},
		{name: "aborted", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), facts: StepFacts{Aborted: true}, decision: StepAborted, pass: ptr(false), outcome: Fail, interval: StepPass},
		// The abort is the server's evidence: it fails the step even where
		// the trust rule could not tell whose the miss was (the refinement
		// Step documents).
		{name: "aborted beside the client's miss", slo: "p99<=5ms", n: 2000, f: flat(ms, 5900*us), facts: StepFacts{Aborted: true}, decision: StepAborted, pass: ptr(false), outcome: Fail, interval: StepFail},
		// A lost target fails the step, its outcome the judgement's Error.
		{name: "target lost", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), adjust: func(r *scheduler.Result) {
			r.Counts.Completed = 0
		}, decision: StepFail, pass: ptr(false), outcome: Error, why: "the target was lost"},
		// Another clause fails for sure: the step fails whatever the
		// percentile's interval says.
		{name: "a sure failure beside an uncertain interval", slo: "p99<=1ms,max<=2ms", n: 2000, f: tail(12, 500*us, 3*ms), decision: StepFail, pass: ptr(false), outcome: Fail, interval: StepUncertain},
		{name: "too few samples", slo: "p99.9<=1ms", n: 2000, f: flat(500*us, 10*us), facts: StepFacts{Short: []string{"p99.9"}}, decision: StepUnjudged, outcome: Inconclusive, interval: StepUncertain, why: "too few samples for p99.9"},
		// A clause that bounds no percentile has no interval.
		{name: "no percentile clause", slo: "max<=1ms", n: 2000, f: flat(500*us, 10*us), decision: StepPass, pass: ptr(true), outcome: Pass},
	} {
		slo, err := ParseSLO(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		r := crafted("open", c.n, c.f, true)
		if c.adjust != nil {
			c.adjust(r)
		}
		tt, j, err := NewTest(r, report.TestOptions{}, slo)
		if err != nil {
			t.Fatal(err)
		}
		c.facts.Intervals = PercentileIntervals(tt.SLO, r.Response, nil)
		v := Step(tt, j, c.facts)
		var shown StepDecision
		if v.Shown >= 0 {
			shown = StepDecision(v.Intervals[v.Shown].Decision)
		}
		if v.Decision != c.decision || !samePass(v.Pass, c.pass) || v.Outcome != c.outcome || shown != c.interval || !strings.Contains(v.Why, c.why) {
			t.Errorf("%s: decision %q pass %v outcome %s interval %q why %q; want %q %v %s %q %q (%s)",
				c.name, v.Decision, fmtPass(v.Pass), v.Outcome, shown, v.Why, c.decision, fmtPass(c.pass), c.outcome, c.interval, c.why, j.Reason)
		}
		// The step composes: never better than its judgement, but for an
		// aborted or saturated one.
		if v.Decision != StepAborted && v.Decision != StepSaturated && Worse(v.Outcome, j.Outcome) != v.Outcome {
			t.Errorf("%s: outcome %s better than the judgement's %s", c.name, v.Outcome, j.Outcome)
		}
	}
}

// TestPercentileIntervals: the interval of p99 from order statistics and
// its decision against the bound, on the whole step or per --slo-window
// window (the worst window decides: a failing one, else an uncertain one,
// else the pass nearest its bound; a window without samples fails).
func TestPercentileIntervals(t *testing.T) {
	const us = time.Microsecond
	h := func(n, slow int, fast, slowV time.Duration) *hdrhistogram.Histogram {
		out := histo.New()
		for i := range n {
			v := fast
			if i < slow {
				v = slowV
			}
			_ = out.RecordValue(int64(v))
		}
		return out
	}
	slo, _ := ParseSLO("p99<=1ms,errors<1%,p50<1ms")
	r := crafted("open", 1000, func(int) (time.Duration, time.Duration) { return 500 * us, 0 }, true)
	tt, _, err := NewTest(r, report.TestOptions{}, slo)
	if err != nil {
		t.Fatal(err)
	}
	whole := PercentileIntervals(tt.SLO, h(1000, 0, 500*us, 0), nil)
	if len(whole) != 2 || whole[0].Decision != string(StepPass) || whole[2].Decision != string(StepPass) || whole[0].Lo == nil || *whole[0].Lo > 0.5 || *whole[0].Hi < 0.5 {
		t.Errorf("whole step: %+v", whole)
	}
	// 1000 samples, the p99's interval spans ranks 984..996 (from
	// histo.RankCI): 5 slow ones leave its upper end fast, 20 its lower
	// end slow.
	for _, c := range []struct {
		slow int
		want string
	}{{3, string(StepPass)}, {10, string(StepUncertain)}, {20, string(StepFail)}} {
		got := PercentileIntervals(tt.SLO, h(1000, c.slow, 500*us, 2000*us), nil)[0]
		if got.Decision != c.want {
			t.Errorf("%d slow of 1000: %+v, want %s", c.slow, got, c.want)
		}
	}
	win := func(s int, hist *hdrhistogram.Histogram) Window {
		return Window{Start: time.Duration(s) * time.Second, Duration: time.Second, Latency: hist}
	}
	for _, c := range []struct {
		name    string
		windows []Window
		want    StepDecision
		at      float64
	}{
		{"every window passes: the nearest its bound", []Window{win(0, h(1000, 0, 500*us, 0)), win(1, h(1000, 0, 800*us, 0))}, StepPass, 1},
		{"one uncertain", []Window{win(0, h(1000, 0, 500*us, 0)), win(1, h(1000, 10, 500*us, 2000*us)), win(2, h(1000, 0, 500*us, 0))}, StepUncertain, 1},
		{"one fails", []Window{win(0, h(1000, 10, 500*us, 2000*us)), win(1, h(1000, 0, 500*us, 0)), win(2, h(1000, 20, 500*us, 2000*us))}, StepFail, 2},
		{"an empty window fails", []Window{win(0, h(1000, 0, 500*us, 0)), win(1, nil)}, StepFail, 1},
	} {
		got := PercentileIntervals(tt.SLO, nil, c.windows)[0]
		if got.Decision != string(c.want) || got.WindowS == nil || *got.WindowS != c.at {
			t.Errorf("%s: %+v, want %s at %v s", c.name, got, c.want, c.at)
		}
	}
}

func ptr(b bool) *bool { return &b }

func samePass(a, b *bool) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func fmtPass(p *bool) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatBool(*p)
}
