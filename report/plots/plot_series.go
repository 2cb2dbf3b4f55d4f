package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/pacer-load/pacer/report"
)

// slot is where a matched test sits on the time axis.
type slot struct {
	name       string
	start, end float64
}

// slots lays the matched tests end to end, each as long as its longest
// run (or its last interval's end).
func slots(ms []report.Match) []slot {
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

// seriesDataWidth is about the width of the series' data area, in
// points: the drawing's, less its margins and the latency axis.
var seriesDataWidth = plotWidth - vg.Points(100)

// fitName cuts a test's name to fit the width of its slot (names of
// tests laid end to end would run into each other).
func fitName(name string, width vg.Length) string {
	sty := text.Style{Font: font.From(sans, 9), Handler: plot.DefaultTextHandler}
	r := []rune(cutLegend(name))
	for n := len(r); n > 0; n-- {
		s := string(r[:n])
		if n < len(r) {
			s += "…"
		}
		if sty.Width(s) <= width-vg.Points(8) {
			return s
		}
	}
	return ""
}

// stat is one line of the latency panel: its name, its value in an
// interval (false: none, the line breaks) and its colour.
type stat struct {
	name  string
	value func(iv *report.Interval) (float64, bool)
	color color.Color
}

// responseStat is a figure of an interval's response time.
func responseStat(pick func(s *report.Interval) float64) func(iv *report.Interval) (float64, bool) {
	return func(iv *report.Interval) (float64, bool) {
		if iv.ResponseMs == nil {
			return 0, false
		}
		v := pick(iv)
		if v <= 0 { // not printed (another tool's series)
			return 0, false
		}
		return plotMs(v)
	}
}

var seriesStats = []stat{
	{"p50", responseStat(func(iv *report.Interval) float64 { return iv.ResponseMs.P50 }), palette[0]},
	{"p99", responseStat(func(iv *report.Interval) float64 { return iv.ResponseMs.P99 }), palette[1]},
	{"max", responseStat(func(iv *report.Interval) float64 { return iv.ResponseMs.Max }), palette[3]},
	// The age of the oldest unanswered request at the interval's end:
	// while the server is frozen nothing completes (the other lines
	// break), and this line climbs in the intervals the freeze covers.
	{"oldest unanswered", func(iv *report.Interval) (float64, bool) {
		if iv.OldestInflightMs == nil || *iv.OldestInflightMs <= 0 {
			return 0, false // nothing in flight
		}
		return plotMs(*iv.OldestInflightMs)
	}, palette[4]},
}

// stepXY draws each interval as a flat segment over its extent; an
// interval without a value breaks the line.
func stepXY(ivs []report.Interval, off float64, value func(iv *report.Interval) (float64, bool)) []plotter.XYs {
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
func seriesPlots(in []report.Input, o PlotOptions) (latPanel, thrPanel *panel) {
	ms := report.MatchTests(in)
	sl := slots(ms)
	lat := newPlot(plotTitle("Latency per interval", in, o), "", "latency (ms)")
	xlabel := "time (s)"
	if len(sl) > 1 {
		xlabel += ", tests one after another"
	}
	thr := newPlot("", xlabel, "throughput (req/s)")
	lat.X.Tick.Marker = plot.TickerFunc(linearTicker)
	thr.X.Tick.Marker = plot.TickerFunc(linearTicker)
	thr.Y.Tick.Marker = plot.TickerFunc(linearTicker)
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.TickerFunc(logTicker)
	lo, hi, rmax := math.Inf(1), 0.0, 0.0
	intervals := 0
	leg, legThr := newLegend(), newLegend()
	latPanel, thrPanel = &panel{p: lat, leg: leg}, &panel{p: thr, leg: legThr}
	var target *plotter.Line // a target rate's line, for the legend
	for r, m := range ms {
		for f, t := range m.Tests {
			if t == nil || len(t.Intervals) == 0 {
				continue
			}
			intervals += len(t.Intervals)
			for _, st := range seriesStats {
				for _, xy := range stepXY(t.Intervals, sl[r].start, st.value) {
					l, err := plotter.NewLine(xy)
					if err != nil {
						continue // a NaN or an infinity: nothing to draw
					}
					l.Color, l.Dashes, l.Width = st.color, dash(f), vg.Points(1.5)
					latPanel.add(l)
					leg.add(st.name, st.color, nil)
					for _, v := range xy {
						lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
					}
				}
			}
			for _, xy := range stepXY(t.Intervals, sl[r].start, func(iv *report.Interval) (float64, bool) {
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
				// Black, apart from the latency lines' colours; a
				// document's dash pattern tells documents apart.
				l.Color, l.Dashes, l.Width = color.Black, dash(f), vg.Points(1.5)
				thrPanel.add(l)
				legThr.add(legendName(in, f, "completed per second"), l.Color, l.Dashes)
				for _, v := range xy {
					rmax = math.Max(rmax, v.Y)
				}
			}
			if t.Messages != nil {
				rmax = math.Max(rmax, deliveredLine(thrPanel, legThr, in, t, sl[r].start, f))
			}
			if t.TargetRate != nil && *t.TargetRate > 0 {
				l, err := plotter.NewLine(plotter.XYs{{X: sl[r].start, Y: *t.TargetRate}, {X: sl[r].end, Y: *t.TargetRate}})
				if err == nil {
					l.Color, l.Dashes, l.Width = grey, []vg.Length{vg.Points(3), vg.Points(3)}, vg.Points(1)
					thr.Add(l)
					target = l
					rmax = math.Max(rmax, *t.TargetRate)
				}
			}
		}
	}
	leg.files(in)
	if target != nil {
		legThr.addThumb("target rate", target)
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
	// Room at the top of the latency panel for the tests' names.
	lat.Y.Min, lat.Y.Max = logRange(lo, hi, 0.1)
	thr.Y.Min, thr.Y.Max = 0, math.Max(rmax*1.08, 1)
	for r, m := range ms {
		for _, t := range m.Tests {
			if t != nil {
				eventOverlay(t, sl[r].start, lat, thr, leg)
			}
		}
	}
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
		labels.Labels = append(labels.Labels, fitName(s.name, vg.Length((s.end-s.start)/end)*seriesDataWidth))
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
	return latPanel, thrPanel
}

// deliveredLine draws a message test's deliveries per second (every
// receiver's, so fan-out times the rate; a tracking test's
// invalidations) on the throughput panel and returns the highest.
func deliveredLine(pn *panel, leg *legend, in []report.Input, t *report.Test, off float64, f int) float64 {
	top := 0.0
	for _, xy := range stepXY(t.Intervals, off, func(iv *report.Interval) (float64, bool) {
		if iv.Messages == nil || iv.DurationS <= 0 || iv.DurationS < t.IntervalS/2 {
			return 0, false
		}
		return float64(iv.Messages.Delivered) / iv.DurationS, true
	}) {
		l, err := plotter.NewLine(xy)
		if err != nil {
			continue
		}
		l.Color, l.Dashes, l.Width = palette[2], dash(f), vg.Points(1.5)
		pn.add(l)
		what := "delivered per second"
		if t.Messages != nil && t.Messages.Kind == "tracking" {
			what = "invalidations per second"
		}
		leg.add(legendName(in, f, what), l.Color, l.Dashes)
		for _, v := range xy {
			top = math.Max(top, v.Y)
		}
	}
	return top
}
