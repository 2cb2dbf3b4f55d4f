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
	// CI95 is its 95% confidence interval [lo, hi] in ms from order
	// statistics (with --ci); an end is null when no sample bounds it on
	// that side.
	CI95 []*float64 `json:"ci95,omitempty"`
}

// percentileNames pairs histo.Percentiles with their names.
var percentileNames = []string{"p50", "p90", "p95", "p99", "p99.9", "p99.99"}

// percentileStats describes the percentiles of h (nanoseconds); nil for
// an empty histogram. With ci, each gets its 95% confidence interval.
func percentileStats(h *hdrhistogram.Histogram, ci bool) []Percentile {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	n := h.TotalCount()
	out := make([]Percentile, 0, len(histo.Percentiles))
	for i, p := range histo.Percentiles {
		s := Percentile{
			P:                   percentileNames[i],
			ValueMs:             histo.Millis(h.ValueAtQuantile(p)),
			SamplesBeyond:       round(float64(n)*(1-p/100), 3),
			InsufficientSamples: histo.Insufficient(n, p),
		}
		if ci {
			lo, hi, okLo, okHi := histo.PercentileCI(h, p)
			s.CI95 = []*float64{nil, nil}
			if okLo {
				v := histo.Millis(lo)
				s.CI95[0] = &v
			}
			if okHi {
				v := histo.Millis(hi)
				s.CI95[1] = &v
			}
		}
		out = append(out, s)
	}
	return out
}

// writePercentileNotes writes, under a test's summary, which percentiles
// of h its sample cannot support and, with ci, their 95% confidence
// intervals. It writes nothing when there is nothing to say.
func writePercentileNotes(w io.Writer, h *hdrhistogram.Histogram, ci bool) error {
	stats := percentileStats(h, ci)
	if len(stats) == 0 {
		return nil
	}
	var b strings.Builder
	var weak []string
	for _, s := range stats {
		if s.InsufficientSamples {
			weak = append(weak, s.P)
		}
	}
	if len(weak) > 0 {
		fmt.Fprintf(&b, "  insufficient samples: %s (%d samples; a percentile p needs n·(1−p) ≥ %d beyond it)\n",
			strings.Join(weak, ", "), h.TotalCount(), histo.MinTailSamples)
	}
	if ci {
		fmt.Fprintf(&b, "  95%% confidence (ms, order statistics):")
		for _, s := range stats {
			fmt.Fprintf(&b, " %s %s", s.P, ciText(s.CI95))
		}
		b.WriteString("\n")
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

// RepeatsOf summarises the runs of one test: the median, min and max of
// their figures, and each run as a test of its own, with its own SLO
// verdict and verdict (the test's own are those of the runs pooled).
func RepeatsOf(runs []*scheduler.Result, o TestOptions) (*Repeats, error) {
	figs := make([]map[string]float64, len(runs))
	tests := make([]Test, len(runs))
	for i, r := range runs {
		t, _, err := NewTest(r, o)
		if err != nil {
			return nil, err
		}
		figs[i], tests[i] = Figures(t), *t
	}
	return NewRepeats(figs, tests), nil
}

// WriteNotes writes the notes under a test's report: what the sample says
// of each percentile of its response time (with ci, their confidence
// intervals) and, for several runs (rep), their median and min–max.
func WriteNotes(w io.Writer, t *Test, ci bool, rep *Repeats) error {
	if err := writePercentileNotes(w, t.mustFigures().response, ci); err != nil {
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
