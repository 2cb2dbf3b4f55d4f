package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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
			SamplesBeyond:       round(float64(n)*(1-p/100), 3),
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

// writePercentileNotes writes, under a test's summary, which percentiles
// of its sample cannot support and, with ci, their 95% confidence
// intervals and where they come from. It writes nothing when there is
// nothing to say.
func writePercentileNotes(w io.Writer, t *Test, ci bool) error {
	ps := t.ResponsePercentiles
	if ps == nil {
		ps = percentileStats(t.mustFigures().response, false, ciSource{})
	}
	if len(ps) == 0 {
		return nil
	}
	var b strings.Builder
	var weak []string
	for _, s := range ps {
		if s.InsufficientSamples {
			weak = append(weak, s.P)
		}
	}
	if len(weak) > 0 {
		fmt.Fprintf(&b, "  insufficient samples: %s (%d samples; a percentile p needs n·(1−p) ≥ %d beyond it)\n",
			strings.Join(weak, ", "), t.mustFigures().response.TotalCount(), histo.MinTailSamples)
	}
	if ci && ps[0].CI95 != nil {
		switch ps[0].CI95Method {
		case string(stats.Runs):
			fmt.Fprintf(&b, "  95%% confidence (ms, from the spread between the %d runs):", ps[0].CI95N)
		case string(stats.Blocks):
			fmt.Fprintf(&b, "  95%% confidence (ms, block bootstrap over this run's %d intervals; the next run's spread is not in it: --repeat):", ps[0].CI95N)
		case "none":
			fmt.Fprintf(&b, "  95%% confidence: none from %d intervals (one run needs %d; or --repeat)\n", ps[0].CI95N, stats.MinIntervals)
		default: // a document written before intervals took the spread into account
			fmt.Fprintf(&b, "  95%% confidence (ms, order statistics: every request taken as independent):")
		}
		if ps[0].CI95Method != "none" {
			for _, s := range ps {
				fmt.Fprintf(&b, " %s %s", s.P, ciText(s.CI95))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ciText formats [lo, hi], an unbounded end as "…".
func ciText(ci []*float64) string {
	end := func(v *float64) string {
		if v == nil {
			return "…"
		}
		return strconv.FormatFloat(*v, 'f', 3, 64)
	}
	if len(ci) != 2 {
		return "-"
	}
	return "[" + end(ci[0]) + ", " + end(ci[1]) + "]"
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
		rep.Median[name] = round(histo.Median(vs), 6)
		rep.Min[name] = round(lo, 6)
		rep.Max[name] = round(hi, 6)
	}
	return rep
}

// writeRepeats writes the median and min–max of every figure of rep.
func writeRepeats(w io.Writer, title string, rep *Repeats) error {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s: %d runs          %12s %12s %12s\n", title, rep.N, "median", "min", "max")
	for _, name := range RepeatFigures {
		m, ok := rep.Median[name]
		if !ok {
			continue
		}
		label := name + " (ms)"
		digits := 3
		switch name {
		case "achieved_rate":
			label, digits = "achieved (req/s)", 2
		case "errors_pct":
			label = "errors (%)"
		}
		fmt.Fprintf(&b, "  %-28s %12s %12s %12s\n", label,
			strconv.FormatFloat(m, 'f', digits, 64), strconv.FormatFloat(rep.Min[name], 'f', digits, 64),
			strconv.FormatFloat(rep.Max[name], 'f', digits, 64))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteNotes writes the notes under a test's report: what the sample says
// of each percentile of its response time (with ci, their confidence
// intervals) and, for several runs (rep), their median and min–max.
func WriteNotes(w io.Writer, t *Test, ci bool, rep *Repeats) error {
	if err := writePercentileNotes(w, t, ci); err != nil {
		return err
	}
	if rep != nil && rep.N > 1 {
		if err := writeRepeats(w, "repeats", rep); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}
