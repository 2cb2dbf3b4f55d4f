package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// This file draws saved results with gonum.org/v1/plot:
//
//   - the percentile spectrum: latency (ms, log) against the percentile on
//     HdrHistogram's 1/(1−p) axis, one line per series of each test
//     (open: response and service time; closed: latency from the send),
//     one set per document;
//   - the time series: p50, p99 and max latency (ms, log) of each interval
//     and, below, the throughput of each interval (completed requests per
//     second) against time, so a stall shows where it happened. The tests
//     of a document are laid end to end, a matched test of every document
//     in the same slot, separated by grey lines and named at the top.

// Plot formats.
const (
	PNG = "png"
	SVG = "svg"
)

// PlotFormat is the format a plot file's name asks for: PNG for .png, SVG
// for .svg, an error for anything else.
func PlotFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return PNG, nil
	case ".svg":
		return SVG, nil
	}
	return "", fmt.Errorf("%q: want a file name ending in .png or .svg", path)
}

// Sizes of the drawings.
const (
	plotWidth      = 11 * vg.Inch
	spectrumHeight = 5.5 * vg.Inch
	seriesHeight   = 7.5 * vg.Inch
	plotDPI        = 96
)

// Plot draws the spectrum above the time series in one image, as PNG or
// SVG.
func Plot(in []Input, format string) ([]byte, error) {
	spec, err := spectrumPlot(in)
	if err != nil {
		return nil, err
	}
	lat, thr := seriesPlots(in)
	height := spectrumHeight + seriesHeight
	c, write, err := newCanvas(format, plotWidth, height)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	spec.Draw(pad(draw.Crop(dc, 0, 0, seriesHeight, 0)))
	drawSeries(lat, thr, pad(draw.Crop(dc, 0, 0, 0, -spectrumHeight)))
	return write()
}

// PlotSVGs draws the spectrum and the time series as two SVG images.
func PlotSVGs(in []Input) (spectrum, series []byte, err error) {
	spec, err := spectrumPlot(in)
	if err != nil {
		return nil, nil, err
	}
	c, write, err := newCanvas(SVG, plotWidth, spectrumHeight)
	if err != nil {
		return nil, nil, err
	}
	spec.Draw(pad(draw.New(c)))
	if spectrum, err = write(); err != nil {
		return nil, nil, err
	}
	lat, thr := seriesPlots(in)
	c, write, err = newCanvas(SVG, plotWidth, seriesHeight)
	if err != nil {
		return nil, nil, err
	}
	drawSeries(lat, thr, pad(draw.New(c)))
	series, err = write()
	return spectrum, series, err
}

// newCanvas returns a canvas of the format and the function that encodes
// what was drawn on it.
func newCanvas(format string, w, h vg.Length) (vg.CanvasSizer, func() ([]byte, error), error) {
	switch format {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI), vgimg.UseBackgroundColor(color.White))
		return c, func() ([]byte, error) {
			var b bytes.Buffer
			if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
				return nil, fmt.Errorf("encode png: %w", err)
			}
			return b.Bytes(), nil
		}, nil
	case SVG:
		c := vgsvg.New(w, h)
		return c, func() ([]byte, error) {
			var b bytes.Buffer
			if _, err := c.WriteTo(&b); err != nil {
				return nil, fmt.Errorf("encode svg: %w", err)
			}
			return b.Bytes(), nil
		}, nil
	}
	return nil, nil, fmt.Errorf("plot format %q: want png or svg", format)
}

// pad leaves a margin around a drawing.
func pad(c draw.Canvas) draw.Canvas {
	m := vg.Points(14)
	return draw.Crop(c, m, -m, m, -m)
}

// drawSeries draws the latency panel above the throughput panel, their
// data areas aligned.
func drawSeries(lat, thr *plot.Plot, c draw.Canvas) {
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(10)}
	cs := plot.Align([][]*plot.Plot{{lat}, {thr}}, tiles, c)
	lat.Draw(cs[0][0])
	thr.Draw(cs[1][0])
}

// Colours: the Tableau 10 palette, distinct for most colour vision.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// dashes tell documents apart: solid, dashed, dotted, dash-dot.
var dashes = [][]vg.Length{nil, {vg.Points(7), vg.Points(4)}, {vg.Points(2), vg.Points(3)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

func dash(f int) []vg.Length { return dashes[f%len(dashes)] }

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	grey     = color.RGBA{150, 150, 150, 255}
	gridGrey = color.RGBA{225, 225, 225, 255}
)

// newPlot returns a plot with pacer's fonts and a light grid.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 14)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 12)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.Legend.TextStyle.Font = font.From(sans, 10)
	p.Legend.ThumbnailWidth = vg.Points(28)
	p.Legend.Padding = vg.Points(1)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	p.Add(g)
	return p
}

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

// linearTicker labels a linear axis at about eight round values (1, 2 or
// 5 times a power of ten apart), printed without decimals when whole.
func linearTicker(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	raw := (hi - lo) / 8
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	digits := max(0, int(-math.Floor(math.Log10(step))))
	var ts []plot.Tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		v := k * step
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', digits, 64)})
		if half := v + step/2; half <= hi {
			ts = append(ts, plot.Tick{Value: half})
		}
	}
	return ts
}

// logTicker labels a logarithmic axis at powers of ten, and at 2 and 5
// times them when the axis spans at most three decades.
func logTicker(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	dense := hi-lo <= 3
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		base := math.Pow(10, e)
		for k := 1.0; k < 10; k++ {
			v := base * k
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 || dense && (k == 2 || k == 5) {
				t.Label = formatTick(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// formatTick prints a tick value without exponent or trailing zeros.
func formatTick(v float64) string {
	digits := 0
	if v < 1 {
		digits = int(math.Ceil(-math.Log10(v))) + 1
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// decades widens [lo, hi] to whole powers of ten (at least one decade).
func decades(lo, hi float64) (float64, float64) {
	a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if b <= a {
		b = a + 1
	}
	return math.Pow(10, a), math.Pow(10, b)
}

// minMs is the floor of a logarithmic latency axis: 1 ns.
const minMs = 1e-6

// plotMs is a latency as a logarithmic axis can draw it: clamped to
// [minMs, maxMs] (what a histogram holds), not drawn when not a number.
func plotMs(v float64) (float64, bool) {
	if math.IsNaN(v) {
		return 0, false
	}
	return min(max(v, minMs), maxMs), true
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

// series of a test in the spectrum: the histograms and their names.
func spectrumSeries(t *Test) ([]string, []*hdrhistogram.Histogram, error) {
	s, err := t.Histograms.decode()
	if err != nil {
		return nil, nil, err
	}
	if t.Mode == "closed" {
		return []string{"latency (closed)"}, []*hdrhistogram.Histogram{s.response}, nil
	}
	return []string{"response", "service"}, []*hdrhistogram.Histogram{s.response, s.service}, nil
}

func spectrumPlot(in []Input) (*plot.Plot, error) {
	p := newPlot("Latency by percentile"+titleFiles(in), "percentile (%), on a 1/(1−p) scale", "latency (ms)")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(percentileTicker)
	p.Y.Tick.Marker = plot.TickerFunc(logTicker)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(6)
	lo, hi, xmax := math.Inf(1), 0.0, 10.0
	colours := map[string]int{}
	leg := newLegend(p)
	for _, m := range MatchTests(in) {
		for f, t := range m.Tests {
			if t == nil {
				continue
			}
			names, hs, err := spectrumSeries(t)
			if err != nil {
				return nil, fmt.Errorf("%s: test %q: %w", in[f].Label, t.Name, err)
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
				l.Color, l.Dashes, l.Width = colour(ci), dash(f), vg.Points(1.5)
				p.Add(l)
				leg.colour(t.Name+": "+names[k], l.Color)
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
	p.Y.Min, p.Y.Max = logRoom(lo, hi, legendShare(leg.n, 0, spectrumPanel))
	return p, nil
}

// Approximate heights of the data areas, in points, for legendShare.
const (
	spectrumPanel = 290
	seriesPanel   = 210
)

// legendShare is the part of a data area of about panel points that a
// legend (and extra points above it) takes from the top.
func legendShare(entries int, extra, panel float64) float64 {
	return math.Min(0.6, (float64(entries)*10.5+extra+12)/panel)
}

// logRoom is the range of a logarithmic axis showing [lo, hi], from the
// power of ten below lo, with the top share of the axis left free.
func logRoom(lo, hi, share float64) (float64, float64) {
	base, _ := decades(lo, hi)
	d := math.Max(math.Log10(hi)-math.Log10(base), 1) + 0.15
	return base, base * math.Pow(10, d/(1-share))
}

// titleFiles names the documents in a plot's title.
func titleFiles(in []Input) string {
	var names []string
	for _, i := range in {
		names = append(names, i.Label)
	}
	s := strings.Join(names, " vs ")
	if s == "" {
		return ""
	}
	return " — " + s
}

// legend collects a plot's legend: one entry per colour (what a line
// shows) and, with several documents, one per line style (which document
// it comes from), rather than one per line.
type legend struct {
	p    *plot.Plot
	seen map[string]bool
	n    int
}

func newLegend(p *plot.Plot) *legend { return &legend{p: p, seen: map[string]bool{}} }

func (l *legend) add(name string, c color.Color, dashes []vg.Length) {
	if l.seen[name] {
		return
	}
	l.seen[name] = true
	l.n++
	l.p.Legend.Add(name, &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: dashes}})
}

// colour adds an entry for what the lines of colour c show.
func (l *legend) colour(name string, c color.Color) { l.add(name, c, nil) }

// files adds, with several documents, an entry for each one's line style.
func (l *legend) files(in []Input) {
	if len(in) < 2 {
		return
	}
	for f, i := range in {
		l.add(i.Label, color.Black, dash(f))
	}
}

// legendName prefixes a series with its document's label when there are
// several.
func legendName(in []Input, f int, s string) string {
	if len(in) > 1 {
		return in[f].Label + ": " + s
	}
	return s
}

// slot is where a matched test sits on the time axis.
type slot struct {
	name       string
	start, end float64
}

// slots lays the matched tests end to end, each as long as its longest
// run (or its last interval's end).
func slots(ms []Match) []slot {
	var out []slot
	at := 0.0
	for _, m := range ms {
		w := 0.0
		for _, t := range m.Tests {
			if t == nil {
				continue
			}
			w = math.Max(w, t.DurationS)
			if n := len(t.Intervals); n > 0 {
				w = math.Max(w, t.Intervals[n-1].StartS+t.Intervals[n-1].DurationS)
			}
		}
		out = append(out, slot{name: m.Name, start: at, end: at + w})
		at += w
	}
	return out
}

// stat is one line of the latency panel.
type stat struct {
	name  string
	pick  func(s *Interval) *float64
	color color.Color
}

var seriesStats = []stat{
	{"p50", func(iv *Interval) *float64 { return &iv.ResponseMs.P50 }, palette[0]},
	{"p99", func(iv *Interval) *float64 { return &iv.ResponseMs.P99 }, palette[1]},
	{"max", func(iv *Interval) *float64 { return &iv.ResponseMs.Max }, palette[3]},
}

// stepXY draws each interval as a flat segment over its extent; an
// interval without a value (no samples) breaks the line.
func stepXY(ivs []Interval, off float64, value func(iv *Interval) (float64, bool)) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range ivs {
		iv := &ivs[i]
		v, ok := value(iv)
		if !ok {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: off + iv.StartS, Y: v}, plotter.XY{X: off + iv.StartS + iv.DurationS, Y: v})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// seriesPlots draws the latency and throughput panels.
func seriesPlots(in []Input) (lat, thr *plot.Plot) {
	ms := MatchTests(in)
	sl := slots(ms)
	lat = newPlot("Latency per interval"+titleFiles(in), "", "latency (ms)")
	xlabel := "time (s)"
	if len(sl) > 1 {
		xlabel += ", tests one after another"
	}
	thr = newPlot("", xlabel, "throughput (req/s)")
	lat.X.Tick.Marker = plot.TickerFunc(linearTicker)
	thr.X.Tick.Marker = plot.TickerFunc(linearTicker)
	thr.Y.Tick.Marker = plot.TickerFunc(linearTicker)
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.TickerFunc(logTicker)
	lat.Legend.Top = true
	lat.Legend.YOffs = -vg.Points(36) // below the tests' names
	thr.Legend.Top = true
	lo, hi, rmax := math.Inf(1), 0.0, 0.0
	intervals := 0
	leg := newLegend(lat)
	legendThr := map[string]bool{}
	var target []*plotter.Line // a target rate's line, for the legend
	for r, m := range ms {
		for f, t := range m.Tests {
			if t == nil || len(t.Intervals) == 0 {
				continue
			}
			intervals += len(t.Intervals)
			for _, st := range seriesStats {
				for _, xy := range stepXY(t.Intervals, sl[r].start, func(iv *Interval) (float64, bool) {
					if iv.ResponseMs == nil {
						return 0, false
					}
					return plotMs(*st.pick(iv))
				}) {
					l, err := plotter.NewLine(xy)
					if err != nil {
						continue // a NaN or an infinity: nothing to draw
					}
					l.Color, l.Dashes, l.Width = st.color, dash(f), vg.Points(1.5)
					lat.Add(l)
					leg.colour(st.name, st.color)
					for _, v := range xy {
						lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
					}
				}
			}
			for _, xy := range stepXY(t.Intervals, sl[r].start, func(iv *Interval) (float64, bool) {
				// The last interval ends with the window and may last a
				// few ms: a rate over so little time says nothing.
				if iv.DurationS <= 0 || iv.DurationS < t.IntervalS/2 {
					return 0, false
				}
				return float64(iv.Completed) / iv.DurationS, true
			}) {
				l, err := plotter.NewLine(xy)
				if err != nil {
					continue
				}
				l.Color, l.Dashes, l.Width = palette[0], dash(f), vg.Points(1.5)
				if len(in) > 1 {
					l.Color = colour(f)
				}
				thr.Add(l)
				name := legendName(in, f, "completed per second")
				if !legendThr[name] {
					legendThr[name] = true
					thr.Legend.Add(name, l)
				}
				for _, v := range xy {
					rmax = math.Max(rmax, v.Y)
				}
			}
			if t.TargetRate != nil && *t.TargetRate > 0 {
				l, err := plotter.NewLine(plotter.XYs{{X: sl[r].start, Y: *t.TargetRate}, {X: sl[r].end, Y: *t.TargetRate}})
				if err == nil {
					l.Color, l.Dashes, l.Width = grey, []vg.Length{vg.Points(3), vg.Points(3)}, vg.Points(1)
					thr.Add(l)
					target = []*plotter.Line{l}
					rmax = math.Max(rmax, *t.TargetRate)
				}
			}
		}
	}
	leg.files(in)
	for _, l := range target {
		thr.Legend.Add("target rate", l)
	}
	end := 1.0
	if len(sl) > 0 && sl[len(sl)-1].end > 0 {
		end = sl[len(sl)-1].end
	}
	if intervals == 0 {
		lat.Title.Text += ": no interval series in these files"
		lo, hi = 0.1, 1
	}
	lat.X.Min, lat.X.Max = 0, end
	thr.X.Min, thr.X.Max = 0, end
	// Room at the top for the tests' names and the legends.
	lat.Y.Min, lat.Y.Max = logRoom(lo, hi, legendShare(leg.n, 24, seriesPanel))
	thr.Y.Min, thr.Y.Max = 0, math.Max(rmax/(1-legendShare(len(legendThr)+len(target), 0, seriesPanel)), 1)
	// Grey lines between tests, their names at the top of the latency panel.
	var labels plotter.XYLabels
	for i, s := range sl {
		if i > 0 {
			for _, p := range []*plot.Plot{lat, thr} {
				l, err := plotter.NewLine(plotter.XYs{{X: s.start, Y: p.Y.Min}, {X: s.start, Y: p.Y.Max}})
				if err == nil {
					l.Color, l.Width = grey, vg.Points(1)
					p.Add(l)
				}
			}
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: s.start, Y: lat.Y.Max})
		labels.Labels = append(labels.Labels, s.name)
	}
	if len(sl) > 1 || len(sl) == 1 && intervals > 0 {
		if l, err := plotter.NewLabels(labels); err == nil {
			for i := range l.TextStyle {
				l.TextStyle[i].Font = font.From(sans, 9)
				l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = text.XLeft, text.YTop
				l.TextStyle[i].Handler = lat.TextHandler
			}
			l.Offset = vg.Point{X: vg.Points(4), Y: -vg.Points(4)}
			lat.Add(l)
		}
	}
	return lat, thr
}
