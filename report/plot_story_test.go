package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

// dataMax is the largest Y a plot's lines draw.
func dataMax(p *panel) float64 {
	hi := 0.0
	for _, l := range p.lines {
		for _, xy := range l.XYs {
			hi = math.Max(hi, xy.Y)
		}
	}
	return hi
}

// TestPlotTitle: --title names both plots instead of the files.
func TestPlotTitle(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	in := []Input{input(t, "compare.json", compareFixture(t))}
	spec, series, err := plotSVGs(in, PlotOptions{Title: "Freeze demo <1>"})
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
	in := []Input{input(t, "a.json", compareFixture(t)), input(t, "b.json", compareFixture(t))}
	spec, series, err := plotSVGs(in, PlotOptions{})
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

// compareSpectrum is the spectrum panel of the compare fixture, with the
// input it is drawn from.
func compareSpectrum(t *testing.T) ([]Input, *panel) {
	t.Helper()
	in := []Input{input(t, "compare.json", compareFixture(t))}
	spec, err := spectrumPlot(in, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return in, spec
}

// TestLatencyAxisEndsNearTheData: the latency axes end near the largest
// value drawn (legends sit beside the data, not on it).
func TestLatencyAxisEndsNearTheData(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	in, spec := compareSpectrum(t)
	if hi := dataMax(spec); spec.p.Y.Max > 2*hi {
		t.Errorf("the spectrum's axis ends at %g ms, its largest value is %g ms", spec.p.Y.Max, hi)
	}
	lat, thr := seriesPlots(in, PlotOptions{})
	if hi := dataMax(lat); lat.p.Y.Max > 4*hi {
		t.Errorf("the interval latency axis ends at %g ms, its largest value is %g ms", lat.p.Y.Max, hi)
	}
	if hi := dataMax(thr); thr.p.Y.Max > 1.3*hi {
		t.Errorf("the throughput axis ends at %g, its largest value is %g", thr.p.Y.Max, hi)
	}
}

// TestSpectrumSeriesDistinct: each series of a compare plot (a closed
// loop and two open loops, response and service) has its own colour and
// dash pattern, in the plot and in its legend.
func TestSpectrumSeriesDistinct(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	_, spec := compareSpectrum(t)
	colours, styles := map[string]bool{}, map[string]bool{}
	ls := spec.lines
	for _, l := range ls {
		r, g, b, _ := l.Color.RGBA()
		c := fmt.Sprint(r, g, b)
		if colours[c] {
			t.Errorf("two series share colour %s", c)
		}
		colours[c] = true
		styles[fmt.Sprint(l.Dashes)] = true
	}
	if len(ls) != 5 || len(styles) < 3 {
		t.Errorf("%d lines in %d dash patterns, want 5 lines, a pattern per test", len(ls), len(styles))
	}
}

// TestIntervalPlotShowsTheFreeze: the interval plot draws the age of the
// oldest unanswered request at each interval's end, so a freeze shows in
// the intervals it covers, where no reply completes.
func TestIntervalPlotShowsTheFreeze(t *testing.T) {
	t.Parallel()
	doc := hostileDoc(t)
	ivs := doc.Tests[0].Intervals
	for i := range ivs {
		age := 0.4
		if i == 2 {
			age = 180 // frozen: nothing completes, the oldest waits
			ivs[i].ResponseMs = nil
		}
		ivs[i].OldestInflightMs = &age
	}
	in := []Input{input(t, "freeze.json", doc)}
	lat, _ := seriesPlots(in, PlotOptions{})
	found := false
	for _, l := range lat.lines {
		for _, xy := range l.XYs {
			if xy.Y == 180 && xy.X >= ivs[2].StartS && xy.X <= ivs[2].StartS+ivs[2].DurationS {
				found = true
			}
		}
	}
	if !found {
		t.Error("no line draws the frozen interval's oldest request")
	}
	_, series, err := plotSVGs(in, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, series, "oldest unanswered")
}

// TestRelabel: --label FILE=NAME renames an input by its path or base
// name; a file that was not given, or no name, is an error.
func TestRelabel(t *testing.T) {
	t.Parallel()
	in := []Input{{Label: "a.json"}, {Label: "b.json"}, {Label: "c=1.json"}}
	paths := []string{"runs/a.json", "b.json", "c=1.json"}
	if err := Relabel(in, paths, []string{"a.json=before", "runs/../b.json=after the fix", "c=1.json=x=y"}); err != nil {
		t.Fatal(err)
	}
	if in[0].Label != "before" || in[1].Label != "after the fix" || in[2].Label != "x=y" {
		t.Fatalf("labels %q %q %q", in[0].Label, in[1].Label, in[2].Label)
	}
	for _, bad := range []string{"d.json=x", "a.json=", "a.json"} {
		if err := Relabel(in, paths, []string{bad}); err == nil {
			t.Errorf("--label %q accepted", bad)
		}
	}
}

// TestHTMLLeavesOutUnsetSettings: settings a run left unset (null, "")
// are not listed; the text report wraps instead of running off the page;
// --title titles the page.
func TestHTMLLeavesOutUnsetSettings(t *testing.T) {
	t.Parallel()
	doc := hostileDoc(t)
	doc.Config = map[string]any{"connections": 50, "password": nil, "rate": nil, "tls": nil, "user": "", "tests": []any{}}
	in := input(t, "run.json", doc)
	b, err := HTML(Page{Inputs: []Input{in}, Text: strings.Repeat("a long conclusion ", 40), Title: "Freeze <demo>"})
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
