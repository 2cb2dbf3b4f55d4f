package text

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/stats"
)

// writePercentileNotes writes, under a test's summary, which percentiles
// of its sample cannot support and, with ci, their 95% confidence
// intervals and where they come from. It writes nothing when there is
// nothing to say.
func writePercentileNotes(w io.Writer, t *report.Test, ci bool) error {
	ps := t.ResponsePercentiles
	if ps == nil {
		ps = report.PercentileStats(t.MustFacts().Response)
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
			strings.Join(weak, ", "), t.MustFacts().Response.TotalCount(), histo.MinTailSamples)
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

// writeRepeats writes the median and min–max of every figure of rep.
func writeRepeats(w io.Writer, title string, rep *report.Repeats) error {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s: %d runs          %12s %12s %12s\n", title, rep.N, "median", "min", "max")
	for _, name := range report.RepeatFigures {
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
func WriteNotes(w io.Writer, t *report.Test, ci bool, rep *report.Repeats) error {
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

// Report writes what pacer run prints for a test: its full text report
// and its notes (with ci, the percentiles' confidence intervals), or with
// quiet its one line.
func Report(w io.Writer, t *report.Test, quiet, ci bool, o report.TextOptions) error {
	if quiet {
		return Quiet(w, t, o)
	}
	if err := Text(w, t, o); err != nil {
		return err
	}
	return WriteNotes(w, t, ci, t.Repeats)
}
