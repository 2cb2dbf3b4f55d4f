package sweep

import (
	"slices"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

// TestSampleRule: a step is lengthened until the SLO's highest percentile
// has 11 samples beyond it (10, histo.MinTailSamples, and a 10% margin),
// to the next 100 ms, at most 6 × --step-duration and a minute; the floor
// is the rate the longest step can judge.
func TestSampleRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		spec   string
		window time.Duration
		base   time.Duration
		rate   float64
		want   time.Duration
		metric string
		floor  float64
		how    string
	}{
		// p99.9 at 1000/s over 5 s: 5 samples beyond it; 11 s gives 11.
		{"p99.9 at 1k/s", "p99.9<=1ms", 0, 5 * time.Second, 1000, 11 * time.Second, "p99.9", 11.0 / 0.001 / 30, "with steps of 30s"},
		{"p99.9 at 10k/s: enough", "p99.9<=1ms", 0, 5 * time.Second, 10000, 5 * time.Second, "p99.9", 11.0 / 0.001 / 30, "with steps of 30s"},
		{"p99.9 at 100/s: the cap", "p99.9<=1ms", 0, 5 * time.Second, 100, 30 * time.Second, "p99.9", 11.0 / 0.001 / 30, "with steps of 30s"},
		{"the highest percentile decides", "p50<=1ms,p99<=2ms,max<=5ms,errors<1%", 0, 5 * time.Second, 100, 11 * time.Second, "p99", 11.0 / 0.01 / 30, "with steps of 30s"},
		{"to the next 100 ms", "p99<=1ms", 0, 800 * time.Millisecond, 1000, 1100 * time.Millisecond, "p99", 11.0 / 0.01 / 4.8, "with steps of 4.8s"},
		{"long steps: a minute at most", "p99.99<=1ms", 0, 20 * time.Second, 1000, time.Minute, "p99.99", 11.0 / 0.0001 / 60, "with steps of 1m0s"},
		{"steps longer than a minute stay", "p99.99<=1ms", 0, 2 * time.Minute, 1000, 2 * time.Minute, "p99.99", 11.0 / 0.0001 / 120, "with steps of 2m0s"},
		{"no percentile clause", "max<=1ms,mean<=1ms", 0, 5 * time.Second, 10, 5 * time.Second, "", 0, "with steps of 30s"},
		// Per window, a longer step adds windows, not samples to each.
		{"--slo-window", "p99<=1ms", 2 * time.Second, 5 * time.Second, 100, 5 * time.Second, "p99", 11.0 / 0.01 / 2, "in --slo-window windows of 2s"},
	} {
		slo, err := verdict.ParseSLO(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		slo.Window = c.window
		r := newSampleRule(slo, c.base)
		got := r.duration(c.rate)
		if got != c.want || r.metric != c.metric || r.how() != c.how || r.floor() < c.floor*0.999 || r.floor() > c.floor*1.001 {
			t.Errorf("%s: duration %s, metric %q, floor %v, %q; want %s, %q, %v, %q", c.name, got, r.metric, r.floor(), r.how(), c.want, c.metric, c.floor, c.how)
		}
		// What the rule plans, the judgement accepts: at the floor, the
		// longest step has enough samples.
		if r.metric != "" && r.window == 0 {
			p, _ := percentileOf(r.metric)
			if f := r.floor(); histo.Insufficient(int64(f*r.duration(f).Seconds()), p) {
				t.Errorf("%s: %v/s for %s is too few for %s", c.name, f, r.duration(f), r.metric)
			}
		}
	}
}

// TestShortAndUnjudged: the clauses a result has too few samples for, and
// when they leave a point unjudged: a pass they cannot support, or a
// failure of theirs alone; not a failure of another clause, nor an abort.
func TestShortAndUnjudged(t *testing.T) {
	res := func(n int, ms float64, window time.Duration) *scheduler.Result {
		r := &scheduler.Result{Mode: "open", Response: histo.New(), Service: histo.New(), Window: window,
			Counts: scheduler.Counts{Scheduled: uint64(n), Sent: uint64(n), Completed: uint64(n)}}
		for range n {
			_ = r.Response.RecordValue(int64(ms * 1e6))
			_ = r.Service.RecordValue(int64(ms * 1e6))
		}
		return r
	}
	for _, c := range []struct {
		name     string
		spec     string
		window   time.Duration
		n        int
		ms       float64
		aborted  bool
		short    []string
		unjudged bool
	}{
		{"enough", "p99<=1ms", 0, 1000, 0.5, false, nil, false},
		{"a pass on too few", "p99<=1ms", 0, 999, 0.5, false, []string{"p99"}, true},
		{"a failure on too few", "p99<=1ms", 0, 500, 5, false, []string{"p99"}, true},
		{"another clause failed", "p99.9<=1ms,p50<=1ms", 0, 1000, 5, false, []string{"p99.9"}, false},
		{"aborted", "p99<=1ms", 0, 500, 5, true, []string{"p99"}, false},
		{"max needs no tail", "max<=1ms", 0, 10, 0.5, false, nil, false},
		// 2000 samples over 4 s are 500 per 1 s window: enough for the
		// p95 clause (25 beyond), not for the p99 (5).
		{"per window", "p95<=1ms,p99<=1ms", time.Second, 2000, 0.5, false, []string{"p99"}, true},
	} {
		slo, err := verdict.ParseSLO(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := res(c.n, c.ms, 4*time.Second)
		tt, j, err := verdict.NewTest(r, report.TestOptions{}, slo)
		sr := tt.SLO
		if err != nil {
			t.Fatal(err)
		}
		slo.Window = c.window
		rule := newSampleRule(slo, time.Second)
		short := rule.short(r, sr)
		// Whether they leave the point unjudged is verdict.Step's to say.
		unjudged := verdict.Step(tt, j, verdict.StepFacts{Aborted: c.aborted, Short: short}).Decision == verdict.StepUnjudged
		if !slices.Equal(short, c.short) || unjudged != c.unjudged {
			t.Errorf("%s: short %v, unjudged %v; want %v, %v", c.name, short, unjudged, c.short, c.unjudged)
		}
	}
}
