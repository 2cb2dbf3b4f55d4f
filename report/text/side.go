package text

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/scheduler"
)

// Render re-renders one document as its run printed it: the full summary
// of each open test (pacer run), redis-benchmark's -q line of each closed
// test and a table of their latencies (pacer bench). Documents of pacer
// compare are drawn by the CLI, which owns compare's table.
func Render(w io.Writer, d *report.Document) error {
	var b strings.Builder
	var closed []report.Test
	open := 0
	for i := range d.Tests {
		t := &d.Tests[i]
		if _, err := t.Facts(); err != nil {
			return err
		}
		if t.Mode == "closed" {
			closed = append(closed, *t)
			b.WriteString(peers.BenchLine(t.Name, t))
			if err := BenchCommands(&b, t, true, report.TextOptions{}); err != nil {
				return err
			}
			continue
		}
		if open == 0 && d.Server != nil { // as run prints it, above the first test
			fmt.Fprintf(&b, "%s\n\n", ServerLine(d.Server))
		}
		open++
		if err := Text(&b, t, report.TextOptions{}); err != nil {
			return err
		}
		if err := writeTestNotes(&b, t); err != nil {
			return err
		}
	}
	if len(closed) > 0 {
		b.WriteString("\n")
		writeLatencies(&b, closed)
		for _, t := range closed {
			if t.Verdict != report.VerdictOK {
				fmt.Fprintf(&b, "%s: verdict %s (%s)\n", safetext.Escape(t.Name), safetext.Escape(t.Verdict), safetext.Escape(t.VerdictReason))
			}
			if t.SLO != nil {
				for _, l := range t.SLO.Lines() {
					fmt.Fprintf(&b, "%s: %s\n", safetext.Escape(t.Name), l)
				}
			}
		}
	}
	if d.Interrupted {
		b.WriteString("(the run was interrupted: partial result)\n")
	}
	if seed := Seed(d); seed != "" && len(d.Tests) > 0 {
		fmt.Fprintf(&b, "seed %s (--seed to repeat)\n", seed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Seed is the document's seed as its config's seed_str holds it, "" when
// it has none (documents written before seed_str existed: their numeric
// seed may have lost digits).
func Seed(d *report.Document) string {
	s, _ := d.Config["seed_str"].(string)
	return safetext.Escape(s)
}

// writeLatencies is the latency table of closed tests, one row per test.
func writeLatencies(b *strings.Builder, tests []report.Test) {
	width := len("latency (ms)")
	for _, t := range tests {
		width = max(width, len(safetext.Escape(t.Name)))
	}
	fmt.Fprintf(b, "%-*s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", width,
		"latency (ms)", "min", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max")
	for _, t := range tests {
		name := safetext.Escape(t.Name)
		if t.ResponseMs == nil {
			fmt.Fprintf(b, "%-*s %9s\n", width, name, "-")
			continue
		}
		s := *t.ResponseMs
		fmt.Fprintf(b, "%-*s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", width, name,
			s.Min, s.Mean, s.P50, s.P90, s.P95, s.P99, s.P999, s.P9999, s.Max)
	}
}

// SideBySide writes the tests of several documents side by side, one
// column per document: the percentiles of the response time (open tests)
// or latency (closed tests), throughput, counts and verdict, then each
// document's difference from the first, in ms and percent. It says which
// tests have no counterpart.
func SideBySide(w io.Writer, in []report.Input) error {
	var b strings.Builder
	const first = 22
	col := len(report.VerdictGeneratorBehind) // the widest cell but a label
	for _, input := range in {
		col = max(col, len(safetext.Escape(input.Label)))
	}
	for i, input := range in {
		d := input.Doc
		tests := "tests"
		if len(d.Tests) == 1 {
			tests = "test"
		}
		if input.Format != report.FormatPacer {
			fmt.Fprintf(&b, "[%d] %s: %s, closed loop (latency from the send), %d %s; it lacks %s\n", i+1, safetext.Escape(input.Label),
				input.Format, len(d.Tests), tests, strings.Join(input.Lacks, ", "))
			continue
		}
		fmt.Fprintf(&b, "[%d] %s: %s, %s mode, %d %s, started %s\n", i+1, safetext.Escape(input.Label),
			safetext.Escape(d.Tool.Name+" "+d.Tool.Version), safetext.Escape(d.Mode), len(d.Tests), tests, safetext.Escape(d.StartedAt))
	}
	b.WriteString("\n")
	var missing []string
	for _, m := range report.MatchTests(in) {
		var where, absent []string
		for f, t := range m.Tests {
			if t == nil {
				absent = append(absent, fmt.Sprintf("[%d]", f+1))
			} else {
				where = append(where, fmt.Sprintf("[%d]", f+1))
			}
		}
		if len(absent) > 0 {
			missing = append(missing, fmt.Sprintf("%s: only in %s", safetext.Escape(m.Name), strings.Join(where, " ")))
		}
		writeMatch(&b, in, m, first, col)
	}
	if len(missing) > 0 {
		b.WriteString("No counterpart:\n")
		for _, s := range missing {
			fmt.Fprintf(&b, "  %s\n", s)
		}
		b.WriteString("\n")
	}
	b.WriteString("Latency: response time from the intended send (open tests), latency from the actual send (closed tests).\n")
	if anyMessages(in) {
		b.WriteString("Pubsub and stream tests: the deliveries' latency, from each message's intended publish (a closed publisher's: from its send).\n")
	}
	for _, input := range in {
		if input.Format != report.FormatPacer {
			b.WriteString("n/a: a figure the file's format does not carry; other tools time each request from its send, as a closed loop.\n")
			break
		}
	}
	b.WriteString("Differences are of single runs: they say nothing about the run-to-run spread.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMatch writes the table of one test across the documents.
func writeMatch(b *strings.Builder, in []report.Input, m report.Match, first, col int) {
	dcol := 20
	fmt.Fprintf(b, "====== %s ======\n", safetext.Escape(m.Name))
	fmt.Fprintf(b, "%-*s", first, "")
	for _, input := range in {
		fmt.Fprintf(b, " %*s", col, safetext.Escape(input.Label))
	}
	base := m.Tests[0]
	for f := 1; f < len(in); f++ {
		if base != nil && m.Tests[f] != nil {
			fmt.Fprintf(b, " %*s", dcol, fmt.Sprintf("[%d]-[1] ms (%%)", f+1))
		}
	}
	b.WriteString("\n")
	text := func(name string, cell func(t *report.Test) string) {
		fmt.Fprintf(b, "%-*s", first, name)
		for _, t := range m.Tests {
			v := "-"
			if t != nil {
				v = cell(t)
			}
			fmt.Fprintf(b, " %*s", col, v)
		}
		b.WriteString("\n")
	}
	const lacking = "n/a" // a figure the test's format does not carry
	text("mode", func(t *report.Test) string { return t.Mode })
	text("target (req/s)", func(t *report.Test) string {
		if t.TargetRate == nil {
			return "-"
		}
		return strconv.FormatFloat(*t.TargetRate, 'f', -1, 64)
	})
	text("throughput (req/s)", func(t *report.Test) string { return strconv.FormatFloat(t.AchievedRate, 'f', 2, 64) })
	b.WriteString("latency (ms)\n")
	for _, p := range []string{"p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"} {
		fmt.Fprintf(b, "%-*s", first, "  "+p)
		vals := make([]float64, len(m.Tests))
		have := make([]bool, len(m.Tests))
		for f, t := range m.Tests {
			cell := "-"
			switch {
			case t != nil && t.Lacking(p):
				cell = lacking
			case t != nil && t.ResponseMs != nil:
				vals[f], _ = t.ResponseMs.Metric(p)
				have[f] = true
				cell = strconv.FormatFloat(vals[f], 'f', 3, 64)
			}
			fmt.Fprintf(b, " %*s", col, cell)
		}
		for f := 1; f < len(m.Tests); f++ {
			if base == nil || m.Tests[f] == nil {
				continue
			}
			cell := "-"
			if have[0] && have[f] {
				cell = diff(vals[0], vals[f])
			}
			fmt.Fprintf(b, " %*s", dcol, cell)
		}
		b.WriteString("\n")
	}
	count := func(name string, n func(c scheduler.Counts) uint64) {
		text(name, func(t *report.Test) string {
			if t.Lacking("counts") {
				return lacking
			}
			return strconv.FormatUint(n(t.Counts), 10)
		})
	}
	count("scheduled", func(c scheduler.Counts) uint64 { return c.Scheduled })
	count("completed", func(c scheduler.Counts) uint64 { return c.Completed })
	count("errors", func(c scheduler.Counts) uint64 { return c.Errors })
	count("timeouts", func(c scheduler.Counts) uint64 { return c.Timeouts })
	count("unsent", func(c scheduler.Counts) uint64 { return c.Unsent })
	text("verdict", func(t *report.Test) string {
		if t.Verdict == "" && t.Foreign() {
			return lacking
		}
		return safetext.Escape(t.Verdict)
	})
	if hasSLO(m) {
		text("slo", func(t *report.Test) string {
			switch {
			case t.SLO == nil:
				return "-"
			case t.SLO.Pass:
				return "pass"
			}
			return "violated"
		})
	}
	b.WriteString("\n")
}

func hasSLO(m report.Match) bool {
	for _, t := range m.Tests {
		if t != nil && t.SLO != nil {
			return true
		}
	}
	return false
}

// diff formats v−base in ms and in percent of base.
func diff(base, v float64) string {
	d := v - base
	s := strconv.FormatFloat(d, 'f', 3, 64)
	if d >= 0 {
		s = "+" + s
	}
	if base > 0 {
		p := 100 * d / base
		ps := strconv.FormatFloat(p, 'f', 1, 64)
		if p >= 0 {
			ps = "+" + ps
		}
		s += " (" + ps + "%)"
	}
	return s
}

// writeTestNotes writes what run prints under a test's report (see
// WriteNotes): the notes on its percentiles (with their confidence
// intervals when it recorded them, --ci) and, for repeats, their table. A
// document written without percentile notes gets none.
func writeTestNotes(w io.Writer, t *report.Test) error {
	if len(t.ResponsePercentiles) == 0 {
		return nil
	}
	return WriteNotes(w, t, t.ResponsePercentiles[0].CI95 != nil, t.Repeats)
}

// anyMessages reports whether a document holds a pubsub or stream test.
func anyMessages(in []report.Input) bool {
	for _, input := range in {
		for _, t := range input.Doc.Tests {
			if t.Messages != nil {
				return true
			}
		}
	}
	return false
}
