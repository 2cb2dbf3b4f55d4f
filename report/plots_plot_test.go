package report_test

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/plots"
)

// keepPlots writes a drawing to $PACER_PLOT_DIR when set, to look at.
func keepPlots(t *testing.T, name string, b []byte) {
	if dir := os.Getenv("PACER_PLOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plotPNG draws in as a plots.PNG, kept as name (see keepPlots), and decodes it.
func plotPNG(t *testing.T, in []report.Input, name string) image.Image {
	t.Helper()
	b, err := plots.Plot(in, plots.PNG, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keepPlots(t, name, b)
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// notBlank fails unless the image has pixels of more than one colour.
func notBlank(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	first := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, _ := first.RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r != r0 || g != g0 || bl != b0 {
				return
			}
		}
	}
	t.Fatalf("the image is blank: every pixel is %v", first)
}

func TestPlotFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, want string }{
		{"out.png", plots.PNG}, {"a/b/OUT.PNG", plots.PNG}, {"x.svg", plots.SVG}, {"x.pdf", ""}, {"x", ""}, {"png", ""},
	} {
		got, err := plots.PlotFormat(c.path)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("PlotFormat(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
}

func TestPlotPNGAndSVG(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	in := []report.Input{report.InputOf(t, "compare.json", report.CompareFixture(t))}
	img := plotPNG(t, in, "compare.png")
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 1056 || h != 1248 {
		t.Errorf("png is %dx%d, want 1056x1248 (11 x 13 in at 96 dpi)", w, h)
	}
	notBlank(t, img)

	s, err := plots.Plot(in, plots.SVG, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keepPlots(t, "compare.svg", s)
	checkSVG(t, s, "Latency by percentile", "Latency per interval", "99.9", "GET (open loop at 4000 req/s) — response", "throughput (req/s)")
}

// checkSVG fails unless b is well-formed XML holding every text.
func checkSVG(t *testing.T, b []byte, texts ...string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var all strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("svg is not well-formed: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			all.Write(cd)
			all.WriteByte('\n')
		}
	}
	for _, s := range texts {
		if !strings.Contains(all.String(), s) {
			t.Errorf("svg has no text %q", s)
		}
	}
}

func TestPlotSeveralFiles(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	a := report.CraftDoc("open",
		report.Craft(t, report.Fixture{Name: "GET", Mode: "open", Rate: 5000, Seconds: 4, Base: 0.1, Interval: 1, Seed: 4}),
		report.Craft(t, report.Fixture{Name: "SET", Mode: "open", Rate: 5000, Seconds: 4, Base: 0.12, Interval: 1, Seed: 5}))
	b := report.CraftDoc("open",
		report.Craft(t, report.Fixture{Name: "GET", Mode: "open", Rate: 5000, Seconds: 4, Base: 0.1, StallMs: 50, StallEvery: 2, Interval: 0.5, Seed: 6}),
		report.Craft(t, report.Fixture{Name: "INCR", Mode: "open", Rate: 5000, Seconds: 2, Base: 0.1, Interval: 0.5, Seed: 7}))
	in := []report.Input{report.InputOf(t, "before.json", a), report.InputOf(t, "after.json", b)}
	notBlank(t, plotPNG(t, in, "two.png"))
	spec, series, err := plots.SVGs(in, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, spec, "GET — response", "GET — service", "INCR — response", "before.json", "after.json")
	checkSVG(t, series, "p99", "max", "GET", "SET", "INCR", "before.json", "after.json — completed per second")
}

// A document written before pacer kept intervals still plots: the
// spectrum, and a series panel that says it has nothing to show.
func TestPlotWithoutIntervals(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	test := report.Craft(t, report.Fixture{Name: "GET", Mode: "open", Rate: 1000, Seconds: 1, Base: 0.1, Interval: 1, Seed: 8})
	test.Intervals, test.IntervalS = nil, 0
	in := []report.Input{report.InputOf(t, "old.json", report.CraftDoc("open", test))}
	spec, series, err := plots.SVGs(in, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, spec, "GET — response")
	checkSVG(t, series, "no interval series in these files")
	if _, err := plots.Plot(in, plots.PNG, plots.PlotOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Text from the documents (test names come from command templates) is
// escaped in the plots.SVG.
func TestPlotEscapesNames(t *testing.T) {
	t.Parallel()
	test := report.Craft(t, report.Fixture{Name: `<script>alert("x")</script> & co`, Mode: "closed", Rate: 1000, Seconds: 1, Base: 0.1, Interval: 0.5, Seed: 9})
	spec, series, err := plots.SVGs([]report.Input{report.InputOf(t, "x.json", report.CraftDoc("closed", test))}, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{spec, series} {
		if bytes.Contains(b, []byte("<script>")) {
			t.Fatal("a test name reached the svg unescaped")
		}
	}
	checkSVG(t, spec, `<script>alert("x")</script> & co — latency (closed)`)
}
