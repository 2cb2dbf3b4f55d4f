package report

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/stats"
)

// Percentile is one percentile of a test's latency with what the sample
// can say about it (tests[].response_percentiles).
type Percentile struct {
	// P names it as the summaries do: p50, p90, p95, p99, p99.9, p99.99.
	P       string  `json:"p"`
	ValueMs float64 `json:"value_ms"`
	// SamplesBeyond is n·(1−p): how many samples lie above it.
	SamplesBeyond float64 `json:"samples_beyond"`
	// InsufficientSamples is set when fewer than histo.MinTailSamples
	// samples lie above it: the value is one of the few largest samples.
	InsufficientSamples bool `json:"insufficient_samples"`
	// CI95 is its 95% confidence interval [lo, hi] in ms (with --ci): an
	// end is null when the data do not bound it on that side. CI95Method
	// says where it comes from: "runs" (the spread between --repeat's
	// runs, each a cluster of its requests: stats.PooledPercentileIntervals),
	// "blocks" (one run: a block bootstrap over its intervals, which holds
	// what clusters in time but not the next run's spread) or "none" (one
	// run of fewer than 5 intervals: no interval); CI95N is the runs or
	// intervals it rests on.
	CI95       []*float64 `json:"ci95,omitempty"`
	CI95Method string     `json:"ci95_method,omitempty"`
	CI95N      int        `json:"ci95_n,omitempty"`
}

// percentileNames pairs histo.Percentiles with their names.
var percentileNames = []string{"p50", "p90", "p95", "p99", "p99.9", "p99.99"}

// ciSource is what a test's percentiles' intervals are found from: its
// repeated runs' latencies (two or more), else its interval series.
type ciSource struct {
	runs      []*hdrhistogram.Histogram
	intervals []scheduler.Interval
	closed    bool // a closed loop: its intervals' latency is Service
}

// percentileStats describes the percentiles of h (nanoseconds); nil for
// an empty histogram. With ci, each gets its 95% confidence interval from
// src (see Percentile.CI95Method).
func percentileStats(h *hdrhistogram.Histogram, ci bool, src ciSource) []Percentile {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	n := h.TotalCount()
	out := make([]Percentile, 0, len(histo.Percentiles))
	for i, p := range histo.Percentiles {
		out = append(out, Percentile{
			P:                   percentileNames[i],
			ValueMs:             histo.Millis(h.ValueAtQuantile(p)),
			SamplesBeyond:       Round(float64(n)*(1-p/100), 3),
			InsufficientSamples: histo.Insufficient(n, p),
		})
	}
	if ci {
		addIntervals(out, src)
	}
	return out
}

// addIntervals sets each percentile's 95% interval from src.
func addIntervals(out []Percentile, src ciSource) {
	end := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		ms := histo.Millis(int64(v))
		return &ms
	}
	set := func(ivs []stats.Interval, method string, n int) {
		for i := range out {
			out[i].CI95Method, out[i].CI95N = method, n
			out[i].CI95 = []*float64{nil, nil}
			if i < len(ivs) {
				out[i].CI95 = []*float64{end(ivs[i].Lo), end(ivs[i].Hi)}
			}
		}
	}
	if len(src.runs) >= 2 {
		hs := make([]stats.Hist, len(src.runs))
		for i, h := range src.runs {
			hs[i] = stats.HistOf(h)
		}
		if ivs, err := stats.PooledPercentileIntervals(hs, histo.Percentiles, stats.Level); err == nil {
			set(ivs, string(stats.Runs), len(hs))
			return
		}
	}
	hs := make([]stats.Hist, 0, len(src.intervals))
	for _, iv := range src.intervals {
		p := iv.Response
		if src.closed {
			p = iv.Service
		}
		h, err := p.Histogram()
		if err != nil {
			set(nil, "none", 0)
			return
		}
		hs = append(hs, stats.HistOf(h))
	}
	ser := stats.NewSeries(hs)
	pis, err := ser.PercentileIntervals(histo.Percentiles, stats.Level, 1)
	if err != nil {
		set(nil, "none", len(hs))
		return
	}
	ivs := make([]stats.Interval, len(pis))
	for i, pi := range pis {
		ivs[i] = pi.Interval
	}
	set(ivs, string(stats.Blocks), len(hs))
}

// Repeats summarises the N runs of one test or sweep point
// (tests[].repeats): the median, min and max of each figure over the
// runs, and every run's own result.
type Repeats struct {
	N      int                `json:"n"`
	Median map[string]float64 `json:"median"`
	Min    map[string]float64 `json:"min"`
	Max    map[string]float64 `json:"max"`
	Runs   []Test             `json:"runs"`
}

// RepeatFigures are the figures a Repeats summarises, in display order:
// achieved_rate (req/s), latencies in ms (response time; latency from the
// send in closed mode) and errors_pct (errors and timeouts, % of
// scheduled).
var RepeatFigures = []string{"achieved_rate", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max", "errors_pct"}

// Figures returns t's RepeatFigures; the latencies are missing when t has
// no sample.
func Figures(t *Test) map[string]float64 {
	f := map[string]float64{"achieved_rate": t.achieved(), "errors_pct": 0}
	if t.Counts.Scheduled > 0 {
		f["errors_pct"] = 100 * float64(t.Counts.Errors+t.Counts.Timeouts) / float64(t.Counts.Scheduled)
	}
	s := histo.Summarize(t.mustFigures().response)
	if s.Count > 0 {
		for _, name := range RepeatFigures[1:8] {
			f[name], _ = s.Metric(name)
		}
	}
	return f
}

// NewRepeats summarises figs, one map of Figures per run, with the runs'
// JSON results.
func NewRepeats(figs []map[string]float64, runs []Test) *Repeats {
	rep := &Repeats{N: len(figs), Median: map[string]float64{}, Min: map[string]float64{}, Max: map[string]float64{}, Runs: runs}
	for _, name := range RepeatFigures {
		var vs []float64
		for _, f := range figs {
			if v, ok := f[name]; ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range vs {
			lo, hi = min(lo, v), max(hi, v)
		}
		rep.Median[name] = Round(histo.Median(vs), 6)
		rep.Min[name] = Round(lo, 6)
		rep.Max[name] = Round(hi, 6)
	}
	return rep
}
