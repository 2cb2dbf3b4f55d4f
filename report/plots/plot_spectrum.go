package plots

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
)

// percentileTicks label the 1/(1−p) axis with percentiles.
var percentileTicks = []struct {
	x     float64
	label string
}{
	{1, "0"}, {2, "50"}, {10, "90"}, {100, "99"}, {1e3, "99.9"}, {1e4, "99.99"},
	{1e5, "99.999"}, {1e6, "99.9999"}, {1e7, "99.99999"},
}

func percentileTicker(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, t := range percentileTicks {
		ts = append(ts, plot.Tick{Value: t.x, Label: t.label})
	}
	// Unlabelled ticks at 3…9 times each power of ten (2 is 50%).
	for x := 1.0; x < 1e7; x *= 10 {
		for m := 3.0; m < 10; m++ {
			ts = append(ts, plot.Tick{Value: x * m})
		}
		if x > 1 {
			ts = append(ts, plot.Tick{Value: x * 2})
		}
	}
	return ts
}

// spectrumXY samples h on the 1/(1−p) axis: 40 points a decade up to the
// rank of the last sample, then the maximum (one pass over the counts).
func spectrumXY(h *hdrhistogram.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	var xs, qs []float64
	for j := 0; ; j++ {
		x := math.Pow(10, float64(j)/40)
		if x >= n {
			break
		}
		xs, qs = append(xs, x), append(qs, 100*(1-1/x))
	}
	xy := make(plotter.XYs, 0, len(xs)+1)
	for i, v := range h.ValueAtPercentilesSlice(qs) {
		xy = append(xy, plotter.XY{X: xs[i], Y: math.Max(float64(v)/1e6, minMs)})
	}
	return append(xy, plotter.XY{X: math.Max(n, 1), Y: math.Max(float64(h.Max())/1e6, minMs)})
}

// summaryPoints are the percentiles a test read from another tool has
// (no histogram), on the 1/(1−p) axis.
func summaryPoints(t *report.Test) plotter.XYs {
	var xy plotter.XYs
	for _, p := range histo.Percentiles {
		m := report.PercentileMetric(p)
		if t.Lacking(m) {
			continue
		}
		v, _ := t.ResponseMs.Metric(m)
		if y, ok := plotMs(v); ok && v > 0 {
			xy = append(xy, plotter.XY{X: 1 / (1 - p/100), Y: y})
		}
	}
	return xy
}

// glyph tells the documents' points apart: circle, square, triangle, …
func glyph(f int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}}
	return shapes[f%len(shapes)]
}

// series of a test in the spectrum: the histograms and their names.
func spectrumSeries(t *report.Test) ([]string, []*hdrhistogram.Histogram, error) {
	response, service, err := t.Histograms.Decode()
	if err != nil {
		return nil, nil, err
	}
	what := "delivery"
	if t.Messages != nil && t.Messages.Kind == "tracking" {
		what = "invalidation"
	}
	switch {
	case t.Messages != nil && t.Mode == "closed":
		return []string{what + " from the send (closed)"}, []*hdrhistogram.Histogram{response}, nil
	case t.Messages != nil:
		return []string{what, what + " from the send"}, []*hdrhistogram.Histogram{response, service}, nil
	case t.Mode == "closed":
		return []string{"latency (closed)"}, []*hdrhistogram.Histogram{response}, nil
	}
	names, hs := []string{"response", "service"}, []*hdrhistogram.Histogram{response, service}
	// Beside response time: each replica's visibility lag, and WAIT's
	// latency from the intended write.
	if v := t.Visibility; v != nil {
		for _, r := range v.Replicas {
			if r.Histogram == "" {
				continue
			}
			h, err := report.DecodeHistogram(r.Histogram)
			if err != nil {
				return nil, nil, fmt.Errorf("visibility lag of %s: %w", r.Addr, err)
			}
			names, hs = append(names, "visibility lag "+r.Addr), append(hs, h)
		}
	}
	if w := t.Wait; w != nil && w.Histogram != "" {
		h, err := report.DecodeHistogram(w.Histogram)
		if err != nil {
			return nil, nil, fmt.Errorf("WAIT latency: %w", err)
		}
		names, hs = append(names, "WAIT latency"), append(hs, h)
	}
	return names, hs, nil
}

// spectrumPlot draws every test's latency by percentile. Each series (a
// test's response, service or closed latency) has a colour of its own;
// with one document each test also has a dash pattern of its own, with
// several each document has one (and a legend entry for it).
func spectrumPlot(in []report.Input, o PlotOptions) (*panel, error) {
	p := newPlot(plotTitle("Latency by percentile", in, o), "percentile (%), on a 1/(1−p) scale", "latency (ms)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(percentileTicker)
	p.Y.Tick.Marker = plot.TickerFunc(logTicker)
	lo, hi, xmax := math.Inf(1), 0.0, 10.0
	colours := map[string]int{}
	leg := newLegend()
	pn := &panel{p: p, leg: leg}
	for mi, m := range report.MatchTests(in) {
		for f, t := range m.Tests {
			if t == nil {
				continue
			}
			names, hs, err := spectrumSeries(t)
			if err != nil {
				return nil, fmt.Errorf("%s: test %q: %w", in[f].Label, t.Name, err)
			}
			style := dash(f)
			if len(in) == 1 {
				style = dash(mi)
			}
			if t.Histograms.Response == "" && t.ResponseMs != nil {
				// Another tool's result: the percentiles it printed.
				key := m.Name + "\x00points"
				ci, ok := colours[key]
				if !ok {
					ci = len(colours)
					colours[key] = ci
				}
				xy := summaryPoints(t)
				if len(xy) == 0 {
					continue
				}
				sc, err := plotter.NewScatter(xy)
				if err != nil {
					continue
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: colour(ci), Radius: vg.Points(3.5), Shape: glyph(f)}
				pn.p.Add(sc)
				leg.addThumb(legendName(in, f, t.Name+" — latency (closed), printed percentiles"), sc)
				for _, v := range xy {
					lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
				}
				continue
			}
			for k, h := range hs {
				if h == nil || h.TotalCount() == 0 {
					continue
				}
				xy := spectrumXY(h)
				key := m.Name + "\x00" + names[k]
				ci, ok := colours[key]
				if !ok {
					ci = len(colours)
					colours[key] = ci
				}
				l, err := plotter.NewLine(xy)
				if err != nil {
					return nil, err
				}
				l.Color, l.Dashes, l.Width = colour(ci), style, vg.Points(1.5)
				pn.add(l)
				if len(in) == 1 {
					leg.add(t.Name+" — "+names[k], l.Color, style)
				} else {
					leg.add(t.Name+" — "+names[k], l.Color, nil)
				}
				for _, v := range xy {
					lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
				}
				xmax = math.Max(xmax, xy[len(xy)-1].X)
			}
		}
	}
	if hi == 0 {
		p.Title.Text += " (no samples)"
		lo, hi = 0.1, 1
	}
	p.X.Min, p.X.Max = 1, xmax
	leg.files(in)
	p.Y.Min, p.Y.Max = logRange(lo, hi, 0)
	return pn, nil
}
