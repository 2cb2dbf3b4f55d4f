package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
)

// The plots' own drawing, checked on synthetic results (report.Synthetic).

// compareDoc is a compare-like document: a closed loop and two open loops,
// against a server that stalls 100 ms every second.
func compareDoc(t *testing.T) *report.Document {
	return report.SyntheticDocument("mixed",
		reporttest.Craft(t, report.SyntheticRun{Name: "GET (closed loop)", Mode: "closed", Rate: 8000, Seconds: 3, Base: 0.3, StallMs: 100, StallEvery: 1, Interval: 0.1, Seed: 1}),
		reporttest.Craft(t, report.SyntheticRun{Name: "GET (open loop at 4000 req/s)", Mode: "open", Rate: 4000, Seconds: 3, Base: 0.1, StallMs: 100, StallEvery: 1, Interval: 0.1, Seed: 2}),
		reporttest.Craft(t, report.SyntheticRun{Name: "GET (open loop at 6000 req/s)", Mode: "open", Rate: 6000, Seconds: 3, Base: 0.1, StallMs: 100, StallEvery: 1, Interval: 0.1, Seed: 3}),
	)
}

// freezeDoc is one open GET test of four intervals.
func freezeDoc(t *testing.T) *report.Document {
	return report.SyntheticDocument("open", reporttest.Craft(t, report.SyntheticRun{Name: "GET", Mode: "open", Rate: 2000, Seconds: 1, Base: 0.2, Interval: 0.25, Seed: 4}))
}

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

// compareSpectrum is the spectrum panel of the compare fixture, with the
// input it is drawn from.
func compareSpectrum(t *testing.T) ([]report.Input, *panel) {
	t.Helper()
	in := []report.Input{reporttest.Input(t, "compare.json", compareDoc(t))}
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
	testrun.SkipRace(t, "one goroutine drawing a plot, which the detector only slows")
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
	testrun.SkipRace(t, "one goroutine drawing a plot, which the detector only slows")
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
	doc := freezeDoc(t)
	ivs := doc.Tests[0].Intervals
	for i := range ivs {
		age := 0.4
		if i == 2 {
			age = 180 // frozen: nothing completes, the oldest waits
			ivs[i].ResponseMs = nil
		}
		ivs[i].OldestInflightMs = &age
	}
	in := []report.Input{reporttest.Input(t, "freeze.json", doc)}
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
	_, series, err := SVGs(in, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(series), "oldest unanswered") {
		t.Error("the interval plot does not name the oldest unanswered request")
	}
}

// TestMessageSeriesNames: a message test's spectrum names its latencies
// by what it delivers: deliveries for pubsub and stream, invalidations
// for client-side caching; a closed test's one series says so.
func TestMessageSeriesNames(t *testing.T) {
	t.Parallel()
	h := histo.New()
	_ = h.RecordValue(1000)
	enc, err := histo.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, mode string
		want       []string
	}{
		{"pubsub", "open", []string{"delivery", "delivery from the send"}},
		{"stream", "open", []string{"delivery", "delivery from the send"}},
		{"tracking", "open", []string{"invalidation", "invalidation from the send"}},
		{"tracking", "closed", []string{"invalidation from the send (closed)"}},
	} {
		tt := &report.Test{Mode: c.mode, Messages: &report.Messages{Kind: c.kind}}
		tt.Histograms = report.Histograms{Response: enc, Service: enc}
		names, _, err := spectrumSeries(tt)
		if err != nil || fmt.Sprint(names) != fmt.Sprint(c.want) {
			t.Errorf("%s %s: %q, %v; want %q", c.kind, c.mode, names, err, c.want)
		}
	}
}
