package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/pacer-load/pacer/report"
)

// plot.go, plot_spectrum.go and plot_series.go draw saved results
// with gonum.org/v1/plot:
//
//   - the percentile spectrum: latency (ms, log) against the percentile on
//     HdrHistogram's 1/(1−p) axis, one line per series of each test
//     (open: response and service time; closed: latency from the send),
//     one set per document; other tools' results, which carry a few
//     percentiles and no histogram, as points;
//   - the time series: p50, p99 and max latency (ms, log) of each interval,
//     the age of the oldest unanswered request at its end and, below, the
//     throughput of each interval (completed requests per second) against
//     time, so a stall shows where it happened. The tests of a document
//     are laid end to end, a matched test of every document in the same
//     slot, separated by grey lines and named at the top.
//
// Legends sit below the data, so the axes end near the data (a legend
// drawn over the data needs room above it).

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

// PlotOptions tune the plots.
type PlotOptions struct {
	// Title follows what each plot shows in its title ("Latency by
	// percentile — Title"); "" puts the inputs' labels there.
	Title string
}

// Sizes of the drawings.
const (
	plotWidth      = 11 * vg.Inch
	spectrumHeight = 5.5 * vg.Inch
	seriesHeight   = 7.5 * vg.Inch
	plotDPI        = 96
	// maxLegendText bounds a legend entry, in characters.
	maxLegendText = 64
)

// panel is a plot and its legend, drawn below it, and the lines of data
// it draws (not the grid nor separators).
type panel struct {
	p     *plot.Plot
	leg   *legend
	lines []*plotter.Line
}

// add draws a line of data.
func (pn *panel) add(l *plotter.Line) {
	pn.p.Add(l)
	pn.lines = append(pn.lines, l)
}

// Plot draws the spectrum above the time series in one image, as PNG or
// SVG.
func Plot(in []report.Input, format string, o PlotOptions) (b []byte, err error) {
	defer plotPanic(&err)
	spec, err := spectrumPlot(in, o)
	if err != nil {
		return nil, err
	}
	lat, thr := seriesPlots(in, o)
	height := spectrumHeight + seriesHeight
	c, write, err := newCanvas(format, plotWidth, height)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	drawPanel(spec, pad(draw.Crop(dc, 0, 0, seriesHeight, 0)))
	drawSeries(lat, thr, pad(draw.Crop(dc, 0, 0, 0, -spectrumHeight)))
	return write()
}

// SVGs draws the spectrum and the time series as two SVG images, as the
// HTML page embeds them.
func SVGs(in []report.Input, o PlotOptions) (spectrum, series []byte, err error) {
	defer plotPanic(&err)
	spec, err := spectrumPlot(in, o)
	if err != nil {
		return nil, nil, err
	}
	lat, thr := seriesPlots(in, o)
	c, write, err := newCanvas(SVG, plotWidth, spectrumHeight)
	if err != nil {
		return nil, nil, err
	}
	drawPanel(spec, pad(draw.New(c)))
	if spectrum, err = write(); err != nil {
		return nil, nil, err
	}
	c, write, err = newCanvas(SVG, plotWidth, seriesHeight)
	if err != nil {
		return nil, nil, err
	}
	drawSeries(lat, thr, pad(draw.New(c)))
	series, err = write()
	return spectrum, series, err
}

// plotPanic turns a panic of the plotting library (it panics on values a
// log scale cannot draw, which plotMs keeps out) into an error of one
// line, so a file no one foresaw fails a report instead of crashing it.
func plotPanic(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("plot: %v", r)
	}
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

// drawPanel draws a panel: its plot, and its legend below it.
func drawPanel(pn *panel, c draw.Canvas) {
	h := pn.leg.height(c.Max.X - c.Min.X)
	pn.p.Draw(draw.Crop(c, 0, 0, h, 0))
	pn.leg.draw(legendArea(c, h))
}

// legendArea is the bottom h of c, where a legend goes.
func legendArea(c draw.Canvas, h vg.Length) draw.Canvas {
	out := c
	out.Max.Y = c.Min.Y + h - vg.Points(4)
	return out
}

// drawSeries draws the latency panel above the throughput panel, their
// data areas aligned, and their legends, one after the other, below.
func drawSeries(lat, thr *panel, c draw.Canvas) {
	leg := &legend{entries: append(append([]legendEntry{}, lat.leg.entries...), thr.leg.entries...)}
	h := leg.height(c.Max.X - c.Min.X)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(10)}
	cs := plot.Align([][]*plot.Plot{{lat.p}, {thr.p}}, tiles, draw.Crop(c, 0, 0, h, 0))
	lat.p.Draw(cs[0][0])
	thr.p.Draw(cs[1][0])
	leg.draw(legendArea(c, h))
}

// Colours: the Tableau 20 palette, the ten strong colours first,
// distinct for most colour vision, then their light companions.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
	{174, 199, 232, 255}, {255, 187, 120, 255}, {152, 223, 138, 255}, {255, 152, 150, 255},
	{197, 176, 213, 255}, {196, 156, 148, 255}, {247, 182, 210, 255}, {199, 199, 199, 255},
	{219, 219, 141, 255}, {158, 218, 229, 255},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// dashes: solid, dashed, dotted, dash-dot, long dash, dash-dot-dot.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(7), vg.Points(4)},
	{vg.Points(2), vg.Points(3)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(14), vg.Points(4)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3), vg.Points(2), vg.Points(3)},
}

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
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	p.Add(g)
	return p
}

// plotTitle is a plot's title: what it shows, then --title or the
// inputs' labels.
func plotTitle(what string, in []report.Input, o PlotOptions) string {
	if o.Title != "" {
		return what + " — " + o.Title
	}
	var names []string
	for _, i := range in {
		names = append(names, i.Label)
	}
	if len(names) == 0 {
		return what
	}
	return what + " — " + strings.Join(names, " vs ")
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
// times them when the axis spans at most three decades; an axis that
// would hold fewer than two labels gets one at every tick.
func logTicker(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	dense := hi-lo <= 3
	var ts []plot.Tick
	labels := 0
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
				labels++
			}
			ts = append(ts, t)
		}
	}
	if labels < 2 {
		for i := range ts {
			ts[i].Label = formatTick(ts[i].Value)
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

// minMs is the floor of a logarithmic latency axis: 1 ns.
const minMs = 1e-6

// plotMs is a latency as a logarithmic axis can draw it: clamped to
// [minMs, maxMs] (what a histogram holds), not drawn when not a number.
func plotMs(v float64) (float64, bool) {
	if math.IsNaN(v) {
		return 0, false
	}
	return min(max(v, minMs), report.MaxMs), true
}

// logRange is the range of a logarithmic axis showing [lo, hi] with a
// little room below and above, and the top share of the axis (0 to 1)
// left free for labels.
func logRange(lo, hi, share float64) (float64, float64) {
	if !(lo > 0) || !(hi >= lo) {
		lo, hi = 0.1, 1
	}
	a, b := math.Log10(lo)-0.08, math.Log10(hi)+0.08
	if b-a < 1 { // at least a decade, centred
		m := (a + b) / 2
		a, b = m-0.5, m+0.5
	}
	b += (b - a) * share / (1 - share)
	return math.Pow(10, a), math.Pow(10, b)
}

// cutLegend cuts a legend entry to maxLegendText characters.
func cutLegend(s string) string {
	r := []rune(s)
	if len(r) <= maxLegendText {
		return s
	}
	return string(r[:maxLegendText-1]) + "…"
}

// legend collects a panel's legend: one entry per colour (what a line
// shows) and, with several documents, one per line style (which document
// it comes from), rather than one per line. It is drawn below the data,
// in as many columns as fit, so it never covers a line and the axes end
// near the data.
type legend struct {
	entries []legendEntry
	seen    map[string]bool
}

type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

func newLegend() *legend { return &legend{seen: map[string]bool{}} }

// add adds an entry drawn as a line of colour c and dash pattern dashes.
func (l *legend) add(name string, c color.Color, dashes []vg.Length) {
	l.addThumb(name, &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: dashes}})
}

// addThumb adds an entry drawn by th (a dashed grey target line, a point).
func (l *legend) addThumb(name string, th plot.Thumbnailer) {
	name = cutLegend(name)
	if l.seen[name] {
		return
	}
	l.seen[name] = true
	l.entries = append(l.entries, legendEntry{name, th})
}

// files adds, with several documents, an entry for each one's line style.
func (l *legend) files(in []report.Input) {
	if len(in) < 2 {
		return
	}
	for f, i := range in {
		l.add(i.Label, color.Black, dash(f))
	}
}

// The legend's layout.
var (
	legendFont  = font.From(sans, 10)
	legendThumb = vg.Points(28)
	legendRow   = vg.Points(13)
	legendGap   = vg.Points(18) // between columns
)

// columns is how many columns of entries fit in width, and how wide
// each is.
func (l *legend) columns(width vg.Length) (int, vg.Length) {
	sty := text.Style{Font: legendFont, Handler: plot.DefaultTextHandler}
	var widest vg.Length
	for _, e := range l.entries {
		widest = max(widest, legendThumb+sty.Width(" "+e.name))
	}
	col := widest + legendGap
	n := max(1, min(len(l.entries), int(width/col)))
	return n, col
}

// height is the room the legend takes below a drawing of the width.
func (l *legend) height(width vg.Length) vg.Length {
	if len(l.entries) == 0 {
		return 0
	}
	cols, _ := l.columns(width)
	rows := (len(l.entries) + cols - 1) / cols
	return vg.Length(rows)*legendRow + vg.Points(10)
}

// draw draws the entries in columns, filled row by row, at the top of c.
func (l *legend) draw(c draw.Canvas) {
	if len(l.entries) == 0 {
		return
	}
	cols, col := l.columns(c.Max.X - c.Min.X)
	rows := (len(l.entries) + cols - 1) / cols
	for j := range cols {
		leg := plot.NewLegend()
		leg.TextStyle.Font = legendFont
		leg.ThumbnailWidth = legendThumb
		leg.Top, leg.Left = true, true
		leg.Padding = legendRow - leg.TextStyle.Rectangle("Mg").Size().Y
		for r := range rows {
			if k := r*cols + j; k < len(l.entries) {
				leg.Add(l.entries[k].name, l.entries[k].thumb)
			}
		}
		cc := c
		cc.Min.X = c.Min.X + vg.Length(j)*col
		cc.Max.X = cc.Min.X + col
		leg.Draw(cc)
	}
}

// legendName prefixes a series with its document's label when there are
// several.
func legendName(in []report.Input, f int, s string) string {
	if len(in) > 1 {
		return in[f].Label + " — " + s
	}
	return s
}
