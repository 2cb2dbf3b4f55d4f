package report_test

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/plots"
)

// TestPlotTitle: --title names both plots instead of the files.
func TestPlotTitle(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	in := []report.Input{report.InputOf(t, "compare.json", report.CompareFixture(t))}
	spec, series, err := plots.SVGs(in, plots.PlotOptions{Title: "Freeze demo <1>"})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, spec, "Latency by percentile — Freeze demo <1>")
	checkSVG(t, series, "Latency per interval — Freeze demo <1>")
	if strings.Contains(string(spec), "compare.json") {
		t.Error("a titled plot still names the file")
	}
}

// TestLegendSeparator: a legend entry joins a test and its series with a
// dash, not a colon: Liberation Sans kerns "T:" (GET: response) so the
// colon sits under the T.
func TestLegendSeparator(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	in := []report.Input{report.InputOf(t, "a.json", report.CompareFixture(t)), report.InputOf(t, "b.json", report.CompareFixture(t))}
	spec, series, err := plots.SVGs(in, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, spec, "GET (closed loop) — latency (closed)", "GET (open loop at 4000 req/s) — response")
	checkSVG(t, series, "b.json — completed per second")
	for _, b := range [][]byte{spec, series} {
		if strings.Contains(string(b), "): response") || strings.Contains(string(b), "json: completed") {
			t.Error("a legend entry still joins with a colon")
		}
	}
}

// TestRelabel: --label FILE=NAME renames an input by its path or base
// name; a file that was not given, or no name, is an error.
func TestRelabel(t *testing.T) {
	t.Parallel()
	in := []report.Input{{Label: "a.json"}, {Label: "b.json"}, {Label: "c=1.json"}}
	paths := []string{"runs/a.json", "b.json", "c=1.json"}
	if err := report.Relabel(in, paths, []string{"a.json=before", "runs/../b.json=after the fix", "c=1.json=x=y"}); err != nil {
		t.Fatal(err)
	}
	if in[0].Label != "before" || in[1].Label != "after the fix" || in[2].Label != "x=y" {
		t.Fatalf("labels %q %q %q", in[0].Label, in[1].Label, in[2].Label)
	}
	for _, bad := range []string{"d.json=x", "a.json=", "a.json"} {
		if err := report.Relabel(in, paths, []string{bad}); err == nil {
			t.Errorf("--label %q accepted", bad)
		}
	}
}

// TestHTMLLeavesOutUnsetSettings: settings a run left unset (null, "")
// are not listed; the text report wraps instead of running off the page;
// --title titles the page.
func TestHTMLLeavesOutUnsetSettings(t *testing.T) {
	t.Parallel()
	doc := report.HostileDoc(t)
	doc.Config = map[string]any{"connections": 50, "password": nil, "rate": nil, "tls": nil, "user": "", "tests": []any{}}
	in := report.InputOf(t, "run.json", doc)
	b, err := plots.HTML(plots.Page{Inputs: []report.Input{in}, Text: strings.Repeat("a long conclusion ", 40), Title: "Freeze <demo>"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, absent := range []string{"<td>password</td>", "<td>rate</td>", "<td>tls</td>", "<td>user</td>", "<td>tests</td>"} {
		if strings.Contains(s, absent) {
			t.Errorf("the page lists an unset setting: %s", absent)
		}
	}
	testrun.Contains(t, s, "<td>connections</td>", "white-space: pre-wrap", "<title>Freeze &lt;demo&gt;</title>", "<h1>Freeze &lt;demo&gt;</h1>")
}

// skipDrawingUnderRace skips a test that draws a plot on one goroutine
// under the race detector, which only slows it several times over;
// .ci/run runs it again without -race.
func skipDrawingUnderRace(t *testing.T) {
	t.Helper()
	testrun.SkipRace(t, "one goroutine drawing a plot, which the detector only slows")
}
