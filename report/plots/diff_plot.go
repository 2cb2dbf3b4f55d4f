package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pacer-load/pacer/report"

	"github.com/pacer-load/pacer/report/text"
)

// The pictures of a comparison, one row per test: on the left both
// sides' latency by percentile (HdrHistogram's 1/(1−p) axis), each with
// its interval as a band; on the right the change at each percentile
// with its interval, against the band of no change (±--equivalence),
// each point coloured by its word.

// maxDiffRows bounds the tests drawn (a sweep may hold dozens).
const maxDiffRows = 8

// diffRowHeight is the height of one test's row.
const diffRowHeight = 4.3 * vg.Inch

// Colours of the sides and of the words.
var (
	baseColour  = color.RGBA{31, 119, 180, 255}
	candColour  = color.RGBA{255, 127, 14, 255}
	baseBand    = color.NRGBA{31, 119, 180, 60}
	candBand    = color.NRGBA{255, 127, 14, 60}
	sameBand    = color.NRGBA{120, 120, 120, 50}
	wordColours = map[string]color.Color{
		"worse": color.RGBA{214, 39, 40, 255}, "better": color.RGBA{44, 160, 44, 255},
		"same": color.RGBA{31, 119, 180, 255}, "cannot tell": color.RGBA{110, 110, 110, 255},
	}
)

// DiffPlot draws a comparison's pictures as PNG or SVG.
func DiffPlot(d *report.Diff, format string, o PlotOptions) (b []byte, err error) {
	defer plotPanic(&err)
	rows := d.Tests
	if len(rows) > maxDiffRows {
		rows = rows[:maxDiffRows]
	}
	n := max(len(rows), 1)
	c, write, err := newCanvas(format, plotWidth, vg.Length(n)*diffRowHeight)
	if err != nil {
		return nil, err
	}
	dc := pad(draw.New(c))
	var grid [][]*plot.Plot
	for i, t := range rows {
		title := t.Name
		if o.Title != "" {
			title = o.Title + " — " + t.Name
		}
		if i == len(rows)-1 && len(d.Tests) > len(rows) {
			title += fmt.Sprintf(" (the first %d of %d tests)", len(rows), len(d.Tests))
		}
		grid = append(grid, []*plot.Plot{diffSpectrum(d, t, title), diffChanges(d, t, title)})
	}
	if len(grid) == 0 {
		p := newPlot("no test compared", "", "")
		grid = [][]*plot.Plot{{p, newPlot("", "", "")}}
	}
	tiles := draw.Tiles{Rows: len(grid), Cols: 2, PadX: vg.Points(16), PadY: vg.Points(18)}
	for i, cs := range plot.Align(grid, tiles, dc) {
		for j := range cs {
			grid[i][j].Draw(cs[j])
		}
	}
	return write()
}

// percentileX is percentile p on the 1/(1−p) axis.
func percentileX(p float64) float64 { return 1 / (1 - p/100) }

// diffSpectrum draws both sides' latency by percentile with their bands.
func diffSpectrum(d *report.Diff, t report.DiffTest, title string) *plot.Plot {
	p := newPlot(title+": latency by percentile", "percentile (%), on a 1/(1−p) scale", "latency (ms)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(percentileTicker)
	p.Y.Tick.Marker = plot.TickerFunc(logTicker)
	lo, hi, xmax := math.Inf(1), 0.0, 10.0
	var over []plot.Plotter // the lines, drawn over both bands
	for s, side := range []struct {
		label      string
		line, band color.Color
		value      func(report.DiffFigure) *float64
		iv         func(report.DiffFigure) []*float64
	}{
		{"baseline " + d.Baseline.Label, baseColour, baseBand, func(f report.DiffFigure) *float64 { return f.Baseline }, func(f report.DiffFigure) []*float64 { return f.BaselineInterval }},
		{"candidate " + d.Candidate.Label, candColour, candBand, func(f report.DiffFigure) *float64 { return f.Candidate }, func(f report.DiffFigure) []*float64 { return f.CandidateInterval }},
	} {
		var xy plotter.XYs
		var run []diffBandPoint
		flush := func() {
			if len(run) >= 2 {
				if poly := bandPolygon(run); poly != nil {
					poly.Color = side.band
					poly.LineStyle.Width = 0
					p.Add(poly)
				}
			}
			run = nil
		}
		for _, f := range t.Spectrum {
			v := side.value(f)
			if v == nil || *v <= 0 {
				flush()
				continue
			}
			x := percentileX(f.P)
			y, _ := plotMs(*v)
			xy = append(xy, plotter.XY{X: x, Y: y})
			lo, hi, xmax = math.Min(lo, y), math.Max(hi, y), math.Max(xmax, x)
			iv := side.iv(f)
			if len(iv) == 2 && iv[0] != nil && iv[1] != nil && *iv[0] > 0 {
				a, _ := plotMs(*iv[0])
				b, _ := plotMs(*iv[1])
				run = append(run, diffBandPoint{x, a, b})
				lo, hi = math.Min(lo, a), math.Max(hi, b)
			} else {
				flush()
			}
		}
		flush()
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			continue
		}
		l.Color, l.Width = side.line, vg.Points(1.8)
		if s == 1 {
			l.Dashes = dash(1)
		}
		over = append(over, l)
		sc, err := plotter.NewScatter(xy)
		if err == nil {
			sc.GlyphStyle = draw.GlyphStyle{Color: side.line, Radius: vg.Points(2.2), Shape: glyph(s)}
			over = append(over, sc)
		}
		p.Legend.Add(cutLegend(side.label), l)
	}
	p.Add(over...)
	if hi == 0 {
		p.Title.Text += " (no samples)"
		lo, hi = 0.1, 1
	}
	p.X.Min, p.X.Max = 1, xmax*1.5
	p.Y.Min, p.Y.Max = logRange(lo, hi, 0.18)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font = legendFont
	return p
}

// diffBandPoint is one percentile of a band: its x and its interval.
type diffBandPoint struct{ x, lo, hi float64 }

// bandPolygon is the band through run: along the lower ends, back along
// the upper ones.
func bandPolygon(run []diffBandPoint) *plotter.Polygon {
	pts := make(plotter.XYs, 0, 2*len(run))
	for _, b := range run {
		pts = append(pts, plotter.XY{X: b.x, Y: b.lo})
	}
	for i := len(run) - 1; i >= 0; i-- {
		pts = append(pts, plotter.XY{X: run[i].x, Y: run[i].hi})
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		return nil
	}
	return poly
}

// diffChanges draws the change at each percentile with its interval, in
// %, against the band of no change.
func diffChanges(d *report.Diff, t report.DiffTest, title string) *plot.Plot {
	p := newPlot(title+": change by percentile", "percentile (%), on a 1/(1−p) scale", "candidate − baseline (%)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(percentileTicker)
	eq := d.EquivalencePct
	lo, hi := -2*eq, 2*eq
	xmax := 10.0
	for _, f := range t.Spectrum {
		xmax = math.Max(xmax, percentileX(f.P))
		for _, v := range append([]*float64{f.ChangePct}, f.IntervalPct...) {
			if v != nil {
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
	}
	// Very wide intervals are cut at the axis: a change of −100% is all
	// a latency can fall, and beyond +300% the picture says enough.
	lo, hi = math.Max(lo, -100), math.Min(hi, 300)
	span := hi - lo
	lo, hi = lo-0.08*span, hi+0.08*span
	xlo, xhi := 1.0, xmax*1.5
	if poly, err := plotter.NewPolygon(plotter.XYs{{X: xlo, Y: -eq}, {X: xhi, Y: -eq}, {X: xhi, Y: eq}, {X: xlo, Y: eq}}); err == nil {
		poly.Color, poly.LineStyle.Width = sameBand, 0
		p.Add(poly)
		p.Legend.Add(fmt.Sprintf("no change: ±%s", text.DiffPct(eq)), poly)
	}
	if zero, err := plotter.NewLine(plotter.XYs{{X: xlo, Y: 0}, {X: xhi, Y: 0}}); err == nil {
		zero.Color, zero.Width = grey, vg.Points(1)
		p.Add(zero)
	}
	seen := map[string]bool{}
	for _, f := range t.Spectrum {
		if f.ChangePct == nil {
			continue
		}
		x := percentileX(f.P)
		c := wordColours[f.Word]
		if len(f.IntervalPct) == 2 {
			a, b := lo, hi
			if f.IntervalPct[0] != nil {
				a = math.Max(lo, *f.IntervalPct[0])
			}
			if f.IntervalPct[1] != nil {
				b = math.Min(hi, *f.IntervalPct[1])
			}
			if bar, err := plotter.NewLine(plotter.XYs{{X: x, Y: a}, {X: x, Y: b}}); err == nil {
				bar.Color, bar.Width = c, vg.Points(2.2)
				p.Add(bar)
			}
		}
		y := math.Min(math.Max(*f.ChangePct, lo), hi)
		sc, err := plotter.NewScatter(plotter.XYs{{X: x, Y: y}})
		if err != nil {
			continue
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		if !seen[f.Word] {
			seen[f.Word] = true
			p.Legend.Add(f.Word, sc)
		}
	}
	p.X.Min, p.X.Max = xlo, xhi
	p.Y.Min, p.Y.Max = lo, hi
	p.Y.Tick.Marker = plot.TickerFunc(linearTicker)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font = legendFont
	return p
}
