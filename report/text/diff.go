package text

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// DiffText writes a comparison as text: each test's figures side by side
// (baseline, candidate, the change in the unit and in %, its 95%
// interval and the word), why each "cannot tell" cannot, the tests not
// compared, what the words mean and the gate's decision.
func DiffText(w io.Writer, d *report.Diff) error {
	var b strings.Builder
	side := func(s report.DiffSide) string {
		out := safetext.Escape(s.Label)
		if s.Target != "" {
			out += " (" + safetext.Escape(s.Target) + ")"
		}
		if s.Tool != "" {
			out += ", " + safetext.Escape(s.Tool)
		}
		return out
	}
	fmt.Fprintf(&b, "baseline:  %s\ncandidate: %s\n\n", side(d.Baseline), side(d.Candidate))
	notes := map[string]bool{}
	for _, t := range d.Tests {
		writeDiffTest(&b, d, t)
		if t.Note != "" {
			notes[t.Method] = true
		}
	}
	if len(d.Unmatched) > 0 {
		b.WriteString("Not compared:\n")
		for _, u := range d.Unmatched {
			fmt.Fprintf(&b, "  %s: %s\n", safetext.Escape(u.Test), safetext.Escape(u.Why))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "worse, better: the %.0f%% interval excludes no change and the change is beyond ±%s (errors: ±%s points); same: the whole interval lies within that margin; cannot tell: neither, or a side cannot be trusted.\n",
		100*d.Level, DiffPct(d.EquivalencePct), DiffNum(d.ErrorEquivalencePct))
	if notes["blocks"] {
		b.WriteString("One run per side: its intervals come from a block bootstrap over the run's own intervals; the spread between runs is not in them: repeat the runs (--repeat, or several files per side) to include it.\n")
	}
	if g := d.Gate; g != nil {
		fmt.Fprintf(&b, "gate --max-regression %s: %s: %s\n", safetext.Escape(g.Spec), g.Outcome, safetext.Escape(g.Reason))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Widths of the comparison table's columns.
const (
	diffFirst  = 20
	diffValue  = 12
	diffChange = 20
	diffIv     = 21
)

// writeDiffTest writes one test's table.
func writeDiffTest(b *strings.Builder, d *report.Diff, t report.DiffTest) {
	head := t.Mode
	if t.TargetRate != nil {
		head += ", " + strconv.FormatFloat(*t.TargetRate, 'f', -1, 64) + " req/s"
	}
	fmt.Fprintf(b, "====== %s ====== %s; %s\n", safetext.Escape(t.Name), head, MethodText(t))
	fmt.Fprintf(b, "%-*s %*s %*s %*s %*s  %s\n", diffFirst, "", diffValue, "baseline", diffValue, "candidate",
		diffChange, "change", diffIv, fmt.Sprintf("%.0f%% interval", 100*d.Level), "word")
	var order []string
	figs := map[string][]string{}
	for _, f := range t.Figures {
		label := f.Figure + " (" + f.Unit + ")"
		digits := 3
		if f.Unit == "req/s" {
			digits = 2
		}
		fmt.Fprintf(b, "%-*s %*s %*s %*s %*s  %s\n", diffFirst, label, diffValue, DiffCell(f.Baseline, digits), diffValue, DiffCell(f.Candidate, digits),
			diffChange, ChangeCell(f, digits), diffIv, IntervalCell(f, digits), f.Word)
		if f.Word == "cannot tell" && f.Why != "" {
			if figs[f.Why] == nil {
				order = append(order, f.Why)
			}
			figs[f.Why] = append(figs[f.Why], f.Figure)
		}
	}
	if t.Note != "" {
		fmt.Fprintf(b, "  (%s)\n", safetext.Escape(t.Note))
	}
	if len(order) > 0 {
		b.WriteString("cannot tell:\n")
		for _, why := range order {
			which := strings.Join(figs[why], ", ")
			if len(figs[why]) == len(t.Figures) {
				which = "every figure"
			}
			fmt.Fprintf(b, "  %s: %s\n", which, safetext.Escape(why))
		}
	}
	b.WriteString("\n")
}

// MethodText says what a test's intervals rest on.
func MethodText(t report.DiffTest) string {
	n := func(k int, one, many string) string {
		if k == 1 {
			return "1 " + one
		}
		return strconv.Itoa(k) + " " + many
	}
	switch t.Method {
	case "paired-runs":
		return fmt.Sprintf("paired rounds: %s of A then B or B then A", n(t.NBaseline, "round", "rounds"))
	case "blocks":
		return "one run per side (block bootstrap over its intervals)"
	case "identical":
		return "the same runs on both sides"
	}
	return fmt.Sprintf("%s against %s (the spread between runs)", n(t.NBaseline, "run", "runs"), n(t.NCandidate, "run", "runs"))
}

func DiffCell(v *float64, digits int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

func diffSigned(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if v >= 0 && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// ChangeCell is "+0.086 (+20.9%)", the change in the unit and relative
// to the baseline.
func ChangeCell(f report.DiffFigure, digits int) string {
	if f.Change == nil {
		return "-"
	}
	s := diffSigned(*f.Change, digits)
	switch {
	case f.ChangePct != nil && *f.ChangePct >= 1000:
		s += " (>+999%)"
	case f.ChangePct != nil:
		s += " (" + diffSigned(*f.ChangePct, 1) + "%)"
	}
	return s
}

// IntervalCell is the change's interval: in % for relative figures, in
// the unit for the error rate; an unbounded end is "…".
func IntervalCell(f report.DiffFigure, digits int) string {
	iv, unit, d := f.Interval, "", digits
	if f.Relative() {
		iv, unit, d = f.IntervalPct, "%", 1
	}
	if len(iv) != 2 || iv[0] == nil && iv[1] == nil {
		return "-"
	}
	end := func(v *float64) string {
		switch {
		case v == nil:
			return "…"
		case unit == "%" && *v >= 1000: // a width no table needs
			return ">+999%"
		}
		return diffSigned(*v, d) + unit
	}
	return "[" + end(iv[0]) + ", " + end(iv[1]) + "]"
}

func DiffPct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }

func DiffNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
