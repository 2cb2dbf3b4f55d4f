package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
)

// TestReportEscapesVerdictAndSLO: the verdict and the SLO's lines of a
// document are printed escaped, like everything else it holds.
func TestReportEscapesVerdictAndSLO(t *testing.T) {
	t.Parallel()
	const esc = "\x1b]0;owned\x07\x1b[2J"
	doc := report.HostileDoc(t)
	closed := report.Craft(t, report.Fixture{Name: "SET", Mode: "closed", Rate: 2000, Seconds: 1, Base: 0.2, Interval: 0.25, Seed: 5})
	doc.Tests = append(doc.Tests, closed)
	doc.Mode = "mixed"
	for i := range doc.Tests {
		doc.Tests[i].Verdict = "ok" + esc
		doc.Tests[i].VerdictReason = "why" + esc
		doc.Tests[i].SLO = &report.SLOResult{Spec: "p99<1ms", Pass: false, Violations: []string{"p99 " + esc}, Warnings: []string{"warn " + esc}, Checked: []string{"p99<1ms" + esc}}
	}
	in, err := report.ReadBack(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	var one, two bytes.Buffer
	if err := text.Render(&one, in.Doc); err != nil {
		t.Fatal(err)
	}
	if err := text.SideBySide(&two, []report.Input{in, in}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"render": one.String(), "side by side": two.String()} {
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("%s prints a raw escape:\n%q", name, s)
		}
	}
	// Built in memory (a run's own result), the SLO's lines are escaped too.
	s := report.SLOResult{Violations: []string{esc}, Warnings: []string{esc}}
	for _, l := range s.Lines() {
		if strings.ContainsAny(l, "\x1b\x07") {
			t.Errorf("SLO line %q", l)
		}
	}
}
