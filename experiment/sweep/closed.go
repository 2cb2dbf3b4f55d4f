package sweep

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/verdict"
)

// closedPoint is one -c × -P point of a closed sweep and its runs.
type closedPoint struct {
	clients, pipeline int
	runs              []*scheduler.Result
	test              *report.Test
	verdict.StepJudgement
}

// Closed runs the bench loop at every -c × -P point, in the order of
// increasing requests in flight (clients × pipeline; fewer clients first
// among equals), and reads Little's law and the knee from the points.
func Closed(ctx context.Context, env *experiment.Env, cfg Config) (*Result, error) {
	j := cfg.Test
	var pts []*closedPoint
	for _, c := range cfg.Clients {
		for _, p := range cfg.Pipelines {
			pts = append(pts, &closedPoint{clients: c, pipeline: p})
		}
	}
	sort.SliceStable(pts, func(a, b int) bool {
		x, y := pts[a], pts[b]
		if x.clients*x.pipeline != y.clients*y.pipeline {
			return x.clients*x.pipeline < y.clients*y.pipeline
		}
		return x.clients < y.clients
	})
	var primaries *endpoint.Primaries
	if env.Target.Cluster {
		// The primaries, as bench --cluster finds them, once: each point
		// dials its clients over them by redis-benchmark's rule.
		var err error
		if primaries, err = env.Target.Primaries(ctx, true); err != nil {
			return nil, err
		}
	}
	var runErr error
	n := 0
	var done []*closedPoint
points:
	for _, pt := range pts {
		for k := 0; k < cfg.Repeat; k++ {
			name := experiment.RunName(fmt.Sprintf("%s -c %d -P %d", j.Title, pt.clients, pt.pipeline), k, cfg.Repeat)
			seed := cfg.Seed + uint64(n)*1_000_003
			res, _, err := env.RunClosed(ctx, experiment.Closed{
				Test: j, Name: name, Conns: pt.clients, Primaries: primaries,
				Config: closedloop.Config{Duration: cfg.StepDuration, Drain: cfg.Drain, Pipeline: pt.pipeline,
					Latency: closedloop.FirstReply, Interval: cfg.Interval, ContinueOnError: true},
				StreamSeed:  func(i int) uint64 { return seed + uint64(i) },
				ClusterSeed: cfg.Seed + uint64(n)*7_919,
			})
			n++
			if res != nil {
				pt.runs = append(pt.runs, res)
				sum := histo.Summarize(res.Response)
				cfg.print(fmt.Sprintf("%s: %.2f requests per second, latency p50=%.3f msec p99=%.3f msec\n",
					safetext.Escape(res.Name), res.AchievedRate(), sum.P50, sum.P99))
			}
			if err != nil {
				runErr = err
			}
			if err != nil || ctx.Err() != nil || (res != nil && res.Interrupted) {
				if len(pt.runs) > 0 {
					done = append(done, pt)
				}
				break points
			}
		}
		done = append(done, pt)
	}
	out := &Result{Interrupted: ctx.Err() != nil}
	fp := make([]report.ClosedPoint, len(done))
	for i, pt := range done {
		pooled := scheduler.Pool(pt.runs)
		pooled.Name = fmt.Sprintf("%s -c %d -P %d", j.Title, pt.clients, pt.pipeline)
		opts := report.TestOptions{ID: j.ID, Percentiles: true, CI: cfg.CI}
		if len(pt.runs) > 1 {
			for _, r := range pt.runs {
				opts.Runs = append(opts.Runs, r.Response)
			}
		}
		t, jd, err := verdict.NewTest(pooled, opts, cfg.SLO)
		if err != nil {
			return nil, err
		}
		pt.test = t
		var f verdict.StepFacts
		if t.SLO != nil {
			var wins []verdict.Window
			if cfg.SLO.Window > 0 {
				if wins, err = verdict.LatencyWindows(t, cfg.SLO.Window); err != nil {
					return nil, err
				}
			}
			f.Intervals = verdict.PercentileIntervals(t.SLO, pooled.Response, wins)
		}
		pt.StepJudgement = verdict.Step(t, jd, f)
		if cfg.Repeat > 1 {
			if t.Repeats, err = verdict.Repeats(pt.runs, report.TestOptions{ID: j.ID, Percentiles: true, CI: cfg.CI}, cfg.SLO); err != nil {
				return nil, err
			}
		}
		figs := make([]map[string]float64, len(pt.runs))
		rxLag := make([]float64, 0, len(pt.runs))
		for k, r := range pt.runs {
			rt, _, err := verdict.NewTest(r, report.TestOptions{}, verdict.SLO{})
			if err != nil {
				return nil, err
			}
			figs[k] = report.Figures(rt)
			if r.Receive != nil && r.Receive.TotalCount() > 0 {
				rxLag = append(rxLag, r.Receive.Mean()/1e6)
			}
		}
		med := report.NewRepeats(figs, nil).Median
		fp[i] = report.ClosedPoint{Index: i, Clients: pt.clients, Pipeline: pt.pipeline,
			Throughput: round3(med["achieved_rate"]), MeanMs: med["mean"], P50Ms: med["p50"], P99Ms: med["p99"]}
		fp[i].Decision, fp[i].Intervals = string(pt.Decision), pt.Intervals
		var rxLagMean float64
		if len(rxLag) > 0 {
			rxLagMean = histo.Median(rxLag)
		}
		little(&fp[i], rxLagMean)
		fp[i].LittleMs, fp[i].LittleRatio = round6(fp[i].LittleMs), round6(fp[i].LittleRatio)
		out.Tests = append(out.Tests, *t)
	}
	knee := -1
	if ctx.Err() == nil && runErr == nil {
		knee = FindKnee(fp)
	}
	sw := &report.Sweep{Mode: "closed", Steps: len(fp), Points: fp, Converged: len(done) == len(pts)}
	sw.Reason = fmt.Sprintf("%d of %d points measured", len(done), len(pts))
	if knee >= 0 {
		fp[knee].Knee = true
		k := fp[knee]
		sw.Knee = &k
	}
	if !cfg.SLO.IsZero() {
		sw.SLO = cfg.SLO.Spec
	}
	out.Sweep = sw
	var b strings.Builder
	fmt.Fprintf(&b, "====== closed sweep: %s, points of %s (latency from the send) ======\n", safetext.Escape(j.Title), cfg.StepDuration)
	if err := writeClosedSweep(&b, fp, knee); err != nil {
		return nil, err
	}
	for _, pt := range done {
		nodes := !cfg.Quiet && len(pt.test.Nodes) > 0
		if !cfg.CI && cfg.Repeat == 1 && pt.test.SLO == nil && !nodes {
			continue
		}
		fmt.Fprintf(&b, "  -c %d -P %d:", pt.clients, pt.pipeline)
		if pt.test.SLO != nil {
			fmt.Fprintf(&b, " %s", pt.test.SLO.Line())
			if k := pt.Shown; k >= 0 {
				iv := pt.Intervals[k]
				fmt.Fprintf(&b, "; %s 95%% interval [%s, %s] ms: %s", iv.Metric, verdict.IntervalEnd(iv.Lo), verdict.IntervalEnd(iv.Hi), pt.Decision)
			} else if pt.Decision != "" && pt.Decision != verdict.StepPass && pt.Decision != verdict.StepFail {
				fmt.Fprintf(&b, "; %s", pt.Decision)
			}
		}
		b.WriteString("\n")
		if cfg.CI || cfg.Repeat > 1 {
			if err := text.WriteNotes(&b, pt.test, cfg.CI, pt.test.Repeats); err != nil {
				return nil, err
			}
		}
		if nodes {
			if err := text.WriteNodes(&b, pt.test); err != nil {
				return nil, err
			}
		}
	}
	b.WriteString("\n")
	out.Text = b.String()
	if runErr != nil {
		return out, runErr
	}
	var runs []*scheduler.Result
	points := make([]verdict.StepJudgement, len(done))
	for i, pt := range done {
		runs = append(runs, pt.runs...)
		points[i] = pt.StepJudgement
	}
	out.Outcome, out.Notes = verdict.ClosedSweep(runs, points, !cfg.SLO.IsZero(), out.Interrupted)
	return out, nil
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
