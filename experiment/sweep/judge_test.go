package sweep

import (
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// TestOpenOutcome: the outcome of an open sweep (its exit code) reads the trust rule's
// outcome of the points that bound its result (no clock, crafted points).
func TestOpenOutcome(t *testing.T) {
	yes, no := true, false
	pt := func(rate float64, pass *bool, o verdict.Outcome) *openPoint {
		return &openPoint{rate: rate, pointVerdict: pointVerdict{pass: pass, outcome: o, shown: -1}, test: &report.Test{Name: "get", VerdictReason: "why"}}
	}
	for _, c := range []struct {
		name   string
		points []*openPoint
		slo    bool
		best   float64
		want   verdict.Outcome
	}{
		{"found, the failure above is the server's", []*openPoint{pt(1000, &yes, verdict.Pass), pt(2000, &no, verdict.Fail)}, true, 1000, verdict.Pass},
		{"found, the failure above could be the generator's", []*openPoint{pt(1000, &yes, verdict.Pass), pt(2000, &no, verdict.Inconclusive)}, true, 1000, verdict.Inconclusive},
		{"found, one of two failures there is the server's", []*openPoint{pt(1000, &yes, verdict.Pass), pt(2000, &no, verdict.Inconclusive), pt(2000, &no, verdict.Fail)}, true, 1000, verdict.Pass},
		{"an untrusted failure far above the bracket does not matter", []*openPoint{pt(1000, &yes, verdict.Pass), pt(1500, &no, verdict.Fail), pt(4000, &no, verdict.Inconclusive)}, true, 1000, verdict.Pass},
		{"found at the top, nothing failed", []*openPoint{pt(1000, &yes, verdict.Pass)}, true, 1000, verdict.Pass},
		{"none met, the server's", []*openPoint{pt(1000, &no, verdict.Fail), pt(250, &no, verdict.Fail)}, true, 0, verdict.Fail},
		{"none met, the lowest failure could be the generator's", []*openPoint{pt(1000, &no, verdict.Fail), pt(250, &no, verdict.Inconclusive)}, true, 0, verdict.Inconclusive},
		{"target lost", []*openPoint{pt(1000, &no, verdict.Error)}, true, 0, verdict.Error},
		{"no slo, all ok", []*openPoint{pt(1000, nil, verdict.Pass), pt(2000, nil, verdict.Pass)}, false, 0, verdict.Pass},
		// A point with too few samples for a percentile clause is neither
		// pass nor fail (pass nil): below a sustainable rate it changes
		// nothing; a search that found none exits 3 as without it.
		{"unjudged below a sustainable rate", []*openPoint{pt(250, nil, verdict.Pass), pt(1000, &yes, verdict.Pass), pt(2000, &no, verdict.Fail)}, true, 1000, verdict.Pass},
		{"unjudged, none met", []*openPoint{pt(1000, &no, verdict.Fail), pt(250, nil, verdict.Pass)}, true, 0, verdict.Fail},
		{"only unjudged", []*openPoint{pt(250, nil, verdict.Pass)}, true, 0, verdict.Fail},
		{"no slo, a step behind", []*openPoint{pt(1000, nil, verdict.Pass), pt(2000, nil, verdict.Inconclusive)}, false, 0, verdict.Inconclusive},
	} {
		got, notes := openOutcome(c.points, c.slo, c.best, false)
		if got != c.want {
			t.Errorf("%s: outcome %d, want %d (notes %q)", c.name, got, c.want, notes)
		}
		if c.want == verdict.Inconclusive && !strings.Contains(strings.Join(notes, "\n"), "inconclusive") {
			t.Errorf("%s: notes %q do not say why", c.name, notes)
		}
	}
}

// craftedStep is an open step of n requests at 1000/s whose request i
// took f(i): its service time and its send lag (response = both), in
// intervals of 100 requests (100 ms).
func craftedStep(n int, f func(i int) (serv, lag time.Duration)) *scheduler.Result {
	resp, serv, lag := histo.New(), histo.New(), histo.New()
	var ivs []scheduler.Interval
	ir, is, il := histo.New(), histo.New(), histo.New()
	for i := range n {
		s, l := f(i)
		for _, x := range []struct {
			h *hdrhistogram.Histogram
			v time.Duration
		}{{resp, s + l}, {serv, s}, {lag, l}, {ir, s + l}, {is, s}, {il, l}} {
			_ = x.h.RecordValue(int64(x.v))
		}
		if (i+1)%100 == 0 || i == n-1 {
			iv := scheduler.Interval{Start: time.Duration(len(ivs)) * 100 * time.Millisecond, Duration: 100 * time.Millisecond,
				Counts: scheduler.Counts{Scheduled: 100, Sent: 100, Completed: 100}}
			iv.Response, _ = histo.Pack(ir)
			iv.Service, _ = histo.Pack(is)
			iv.Lag, _ = histo.Pack(il)
			ivs = append(ivs, iv)
			ir, is, il = histo.New(), histo.New(), histo.New()
		}
	}
	return &scheduler.Result{Name: "GET", Mode: "open", TargetRate: timeline.RatePerSecond(1000),
		Counts:   scheduler.Counts{Scheduled: uint64(n), Sent: uint64(n), Completed: uint64(n)},
		Window:   time.Duration(n) * time.Millisecond,
		Response: resp, Service: serv, Lag: lag, LagLimit: time.Millisecond,
		Interval: 100 * time.Millisecond, Intervals: ivs}
}

// TestJudgePoint: a step is decided by the 95% interval of each
// percentile clause (pass: within the bound, fail: beyond it, uncertain:
// holding it), by whose a miss was (the client's: inconclusive), by its
// trend and its samples (crafted results, no clock).
func TestJudgePoint(t *testing.T) {
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
		facts    pointFacts
		decision string
		pass     *bool
		outcome  verdict.Outcome
		interval string // the shown interval's decision ("": none shown)
		why      string // a phrase of why
	}{
		{name: "well within", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), decision: decidePass, pass: ptr(true), outcome: verdict.Pass, interval: decidePass},
		{name: "well beyond, the server's", slo: "p99<=1ms", n: 2000, f: flat(2*ms, 10*us), decision: decideFail, pass: ptr(false), outcome: verdict.Fail, interval: decideFail},
		// p99 of 2000 with 18 slow ones (0.9%) is fast, but the interval
		// reaches the slow ones: not a sure pass.
		{name: "a pass the interval cannot support", slo: "p99<=1ms", n: 2000, f: tail(9, 500*us, 3*ms), decision: decideUncertain, outcome: verdict.Pass, interval: decideUncertain, why: "holds its 1.00 ms bound"},
		// 12 slow of 1000 (1.2%): the p99 is slow, the interval reaches
		// the fast ones.
		{name: "a failure the interval cannot support", slo: "p99<=1ms", n: 2000, f: tail(12, 500*us, 3*ms), decision: decideUncertain, outcome: verdict.Fail, interval: decideUncertain, why: "uncertain"},
		// The issue's `pass (service)`: response p99 6.9 ms on a 5 ms
		// bound, the server's side 1 ms: the send lag's miss is the
		// client's, neither a pass nor the server's failure.
		{name: "the client's miss is no pass", slo: "p99<=5ms", n: 2000, f: flat(ms, 5900*us), decision: decideInconclusive, outcome: verdict.Inconclusive, interval: decideFail, why: "inconclusive: p99<=5ms: the server's side met it"},
		// The server's side missed too, but the host's hiccups (1.5 ms
		// each) could have added all of it: too busy to tell.
		{name: "a host too busy to tell", slo: "p99<=1ms", n: 2000, f: flat(2*ms, 10*us), adjust: func(r *scheduler.Result) {
			r.Hiccups = histo.New()
			_ = r.Hiccups.RecordValues(int64(1500*us), 2000)
		}, decision: decideInconclusive, outcome: verdict.Inconclusive, interval: decideFail, why: "misses 1.000 ms, but the client host was too busy to tell whose it is: host hiccups 1.500 ms"},
		// A queue that grows fails a step that meets its percentiles.
		{name: "unsustainable", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), facts: pointFacts{trend: rising}, decision: decideUnsustainable, pass: ptr(false), outcome: verdict.Fail, interval: decidePass, why: "Mann–Kendall"},
		{name: "aborted", slo: "p99<=1ms", n: 2000, f: flat(500*us, 10*us), facts: pointFacts{aborted: true}, decision: decideAborted, pass: ptr(false), outcome: verdict.Fail, interval: decidePass},
		// Another clause fails for sure: the step fails whatever the
		// percentile's interval says.
		{name: "a sure failure beside an uncertain interval", slo: "p99<=1ms,max<=2ms", n: 2000, f: tail(12, 500*us, 3*ms), decision: decideFail, pass: ptr(false), outcome: verdict.Fail, interval: decideUncertain},
		{name: "too few samples", slo: "p99.9<=1ms", n: 2000, f: flat(500*us, 10*us), facts: pointFacts{short: []string{"p99.9"}}, decision: decideUnjudged, outcome: verdict.Pass, interval: decideUncertain, why: "too few samples for p99.9"},
		// A clause that bounds no percentile has no interval.
		{name: "no percentile clause", slo: "max<=1ms", n: 2000, f: flat(500*us, 10*us), decision: decidePass, pass: ptr(true), outcome: verdict.Pass},
	} {
		slo, err := verdict.ParseSLO(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		r := craftedStep(c.n, c.f)
		if c.adjust != nil {
			c.adjust(r)
		}
		tt, j, err := verdict.NewTest(r, report.TestOptions{}, slo)
		if err != nil {
			t.Fatal(err)
		}
		c.facts.intervals = percentileIntervals(tt.SLO, r.Response, nil)
		v := judgePoint(tt, j, c.facts)
		shown := ""
		if v.shown >= 0 {
			shown = v.intervals[v.shown].Decision
		}
		if v.decision != c.decision || !samePass(v.pass, c.pass) || v.outcome != c.outcome || shown != c.interval || !strings.Contains(v.why, c.why) {
			t.Errorf("%s: decision %q pass %v outcome %d interval %q why %q; want %q %v %d %q %q (%s)",
				c.name, v.decision, fmtPass(v.pass), v.outcome, shown, v.why, c.decision, fmtPass(c.pass), c.outcome, c.interval, c.why, j.Reason)
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
	slo, _ := verdict.ParseSLO("p99<=1ms,errors<1%,p50<1ms")
	r := craftedStep(1000, func(int) (time.Duration, time.Duration) { return 500 * us, 0 })
	tt, _, err := verdict.NewTest(r, report.TestOptions{}, slo)
	if err != nil {
		t.Fatal(err)
	}
	whole := percentileIntervals(tt.SLO, h(1000, 0, 500*us, 0), nil)
	if len(whole) != 2 || whole[0].Decision != decidePass || whole[2].Decision != decidePass || whole[0].Lo == nil || *whole[0].Lo > 0.5 || *whole[0].Hi < 0.5 {
		t.Errorf("whole step: %+v", whole)
	}
	// 1000 samples, the p99's interval spans ranks 984..996 (from
	// histo.RankCI): 5 slow ones leave its upper end fast, 20 its lower
	// end slow.
	for _, c := range []struct {
		slow int
		want string
	}{{3, decidePass}, {10, decideUncertain}, {20, decideFail}} {
		got := percentileIntervals(tt.SLO, h(1000, c.slow, 500*us, 2000*us), nil)[0]
		if got.Decision != c.want {
			t.Errorf("%d slow of 1000: %+v, want %s", c.slow, got, c.want)
		}
	}
	win := func(s int, hist *hdrhistogram.Histogram) verdict.Window {
		return verdict.Window{Start: time.Duration(s) * time.Second, Duration: time.Second, Latency: hist}
	}
	for _, c := range []struct {
		name    string
		windows []verdict.Window
		want    string
		at      float64
	}{
		{"every window passes: the nearest its bound", []verdict.Window{win(0, h(1000, 0, 500*us, 0)), win(1, h(1000, 0, 800*us, 0))}, decidePass, 1},
		{"one uncertain", []verdict.Window{win(0, h(1000, 0, 500*us, 0)), win(1, h(1000, 10, 500*us, 2000*us)), win(2, h(1000, 0, 500*us, 0))}, decideUncertain, 1},
		{"one fails", []verdict.Window{win(0, h(1000, 10, 500*us, 2000*us)), win(1, h(1000, 0, 500*us, 0)), win(2, h(1000, 20, 500*us, 2000*us))}, decideFail, 2},
		{"an empty window fails", []verdict.Window{win(0, h(1000, 0, 500*us, 0)), win(1, nil)}, decideFail, 1},
	} {
		got := percentileIntervals(tt.SLO, nil, c.windows)[0]
		if got.Decision != c.want || got.WindowS == nil || *got.WindowS != c.at {
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

// TestLengthen: an uncertain point runs one more step at its rate,
// doubling its measured time up to --repeat × the longest step, and is
// then left uncertain; a decided one is not lengthened, nor one judged
// per --slo-window window, nor a shard's.
func TestLengthen(t *testing.T) {
	testrun.SkipRace(t, "one goroutine's arithmetic on crafted results, which the detector only slows")
	const ms, us = time.Millisecond, time.Microsecond
	// 10 of every 1000 requests slow, exactly 1%: the p99's interval
	// holds 1 ms however many they are.
	uncertain := func(i int) (time.Duration, time.Duration) {
		if i%1000 < 10 {
			return 3 * ms, 10 * us
		}
		return 500 * us, 10 * us
	}
	sure := func(int) (time.Duration, time.Duration) { return 500 * us, 10 * us }
	for _, c := range []struct {
		name   string
		f      func(int) (time.Duration, time.Duration)
		window time.Duration
		place  *scheduler.Placement
		want   []time.Duration // the extension after each step, 0: none
	}{
		{"uncertain: 1 s, +1, +2, +2, then no more", uncertain, 0, nil, []time.Duration{time.Second, 2 * time.Second, 2 * time.Second, 0}},
		{"sure", sure, 0, nil, []time.Duration{0}},
		{"--slo-window", uncertain, time.Second, nil, []time.Duration{0}},
		{"a shard", uncertain, 0, &scheduler.Placement{K: 1, N: 2}, []time.Duration{0}},
	} {
		slo, err := verdict.ParseSLO("p99<=1ms")
		if err != nil {
			t.Fatal(err)
		}
		slo.Window = c.window
		cfg := &Config{Test: experiment.Test{Title: "GET"}, SLO: slo, StepDuration: time.Second, Repeat: 1}
		o := &openSweep{cfg: cfg, env: &experiment.Env{Place: c.place}, rule: newSampleRule(slo, time.Second),
			stats: map[*openloop.Step]*serverinfo.Stats{}, index: map[*openPoint]int{}, byRate: map[float64][]*openPoint{}}
		o.cur = o.newPoint(2000)
		step := time.Second
		for k, want := range c.want {
			o.cur.steps = append(o.cur.steps, &openloop.Step{Result: craftedStep(int(2000*step.Seconds()), c.f)})
			o.cur.measured += step
			got := o.lengthen()
			if got != want {
				t.Errorf("%s: after step %d (%s measured): lengthened by %s, want %s (%s: %s)", c.name, k, o.cur.measured, got, want, o.cur.decision, o.cur.why)
			}
			if got > 0 {
				o.cur.lengthened++
				step = got
			}
		}
		o.closePoint(false)
		if c.name == "uncertain: 1 s, +1, +2, +2, then no more" && (o.cur.decision != decideUncertain || !strings.Contains(o.cur.why, "after 6s of steps at this rate")) {
			t.Errorf("%s: %s: %s", c.name, o.cur.decision, o.cur.why)
		}
	}
}
