package text

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/internal/safetext"
)

// DiffText writes a comparison as text: each test's figures side by side
// (baseline, candidate, the change in the unit and in %, its 95%
// interval and the word), why each "cannot tell" cannot, the tests not
// compared, what the words mean and the gate's decision.
func DiffText(w io.Writer, d *diff.Document) error {
	var b strings.Builder
	side := func(s diff.SideInfo) string {
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
	level := LevelText(d.Level) + " interval"
	for _, t := range d.Tests {
		if testLevel(d, t) != d.Level {
			level = "interval (" + LevelText(d.Level) + ", or the level a test's table names)"
			break
		}
	}
	fmt.Fprintf(&b, "worse, better: the %s excludes no change and the change is beyond ±%s (errors: ±%s points); same: the whole interval lies within that margin; cannot tell: neither, or a side cannot be trusted.\n",
		level, DiffPct(d.EquivalencePct), DiffNum(d.ErrorEquivalencePct))
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
func writeDiffTest(b *strings.Builder, d *diff.Document, t diff.Test) {
	head := t.Mode
	if t.TargetRate != nil {
		head += ", " + strconv.FormatFloat(*t.TargetRate, 'f', -1, 64) + " req/s"
	}
	fmt.Fprintf(b, "====== %s ====== %s; %s\n", safetext.Escape(t.Name), head, MethodText(t))
	fmt.Fprintf(b, "%-*s %*s %*s %*s %*s  %s\n", diffFirst, "", diffValue, "baseline", diffValue, "candidate",
		diffChange, "change", diffIv, LevelText(testLevel(d, t))+" interval", "word")
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
	if t.Decide != nil {
		fmt.Fprintf(b, "  %s\n", DecideText(t.Decide))
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
func MethodText(t diff.Test) string {
	n := func(k int, one, many string) string {
		if k == 1 {
			return "1 " + one
		}
		return strconv.Itoa(k) + " " + many
	}
	switch t.Method {
	case "paired-runs":
		if t.Duet {
			return fmt.Sprintf("paired rounds: %s of A and B at once (duet)", n(t.NBaseline, "round", "rounds"))
		}
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
func ChangeCell(f diff.Figure, digits int) string {
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
func IntervalCell(f diff.Figure, digits int) string {
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

// testLevel is the confidence of test t's intervals: its own when pacer
// ab --decide-within looked at it more than once, else the document's.
func testLevel(d *diff.Document, t diff.Test) float64 {
	if t.Decide != nil && t.Decide.Level > 0 {
		return t.Decide.Level
	}
	return d.Level
}

// LevelText is a confidence as the table heads it: "95%", "99.2%".
func LevelText(level float64) string {
	return strconv.FormatFloat(math.Round(1000*level)/10, 'f', -1, 64) + "%"
}

// DecideText says how a test of pacer ab --decide-within used its
// budget: "decided at look 3 of 7, after 10 rounds (6 planned; budget
// 5m0s): 99.3% intervals".
func DecideText(dec *diff.Decide) string {
	budget := (time.Duration(dec.BudgetS * float64(time.Second))).Round(time.Millisecond)
	rounds := fmt.Sprintf("after %d rounds (%d planned; budget %s)", dec.Rounds, dec.PlannedRounds, budget)
	switch {
	case dec.Decided && dec.Looks <= 1:
		return fmt.Sprintf("decided at the first look, %s: %s intervals", rounds, LevelText(dec.Level))
	case dec.Decided:
		return fmt.Sprintf("decided at look %d of %d, %s: %s intervals", dec.Looks, dec.PlannedLooks, rounds, LevelText(dec.Level))
	}
	return fmt.Sprintf("undecided when the budget ran out: look %d of %d, %s: %s intervals", dec.Looks, dec.PlannedLooks, rounds, LevelText(dec.Level))
}
