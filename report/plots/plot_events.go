package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pacer-load/pacer/report"
)

// Events on the interval plot: a vertical line where each event was
// first seen, and over the time its windows lasted a shaded band, writes'
// and reads' in colours of their own, on both panels.

var (
	eventColour = color.RGBA{170, 30, 30, 255}
	writeShade  = color.NRGBA{220, 60, 60, 60}
	readShade   = color.NRGBA{60, 90, 220, 50}
)

// eventOverlay draws t's events, its timeline placed at off, on the
// latency and throughput plots (whose vertical ranges are set), and adds
// what it drew to the legend.
func eventOverlay(t *report.Test, off float64, lat, thr *plot.Plot, leg *legend) {
	for _, e := range t.Events {
		for _, w := range []struct {
			win   *report.EventWindow
			shade color.Color
			name  string
		}{{e.Write, writeShade, "writes unavailable (an event's window)"}, {e.Read, readShade, "reads unavailable (an event's window)"}} {
			if w.win == nil || w.win.EndS <= w.win.StartS {
				continue
			}
			for _, p := range []*plot.Plot{lat, thr} {
				x0, x1 := off+w.win.StartS, off+w.win.EndS
				band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: p.Y.Min}, {X: x1, Y: p.Y.Min}, {X: x1, Y: p.Y.Max}, {X: x0, Y: p.Y.Max}})
				if err != nil {
					continue
				}
				band.Color, band.LineStyle.Width = w.shade, 0
				p.Add(band)
				leg.addThumb(w.name, band)
			}
		}
		for _, p := range []*plot.Plot{lat, thr} {
			x := off + e.AtS
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
			if err != nil {
				continue
			}
			l.Color, l.Width, l.Dashes = eventColour, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(2)}
			p.Add(l)
			leg.addThumb("topology event", l)
		}
	}
}
