package report

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keepPlots writes a drawing to $PACER_PLOT_DIR when set, to look at.
func keepPlots(t *testing.T, name string, b []byte) {
	if dir := os.Getenv("PACER_PLOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plotPNG draws in as a PNG, kept as name (see keepPlots), and decodes it.
func plotPNG(t *testing.T, in []Input, name string) image.Image {
	t.Helper()
	b, err := Plot(in, PNG, PlotOptions{})
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
		{"out.png", PNG}, {"a/b/OUT.PNG", PNG}, {"x.svg", SVG}, {"x.pdf", ""}, {"x", ""}, {"png", ""},
	} {
		got, err := PlotFormat(c.path)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("PlotFormat(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
}

func TestPlotPNGAndSVG(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	in := []Input{input(t, "compare.json", compareFixture(t))}
	img := plotPNG(t, in, "compare.png")
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 1056 || h != 1248 {
		t.Errorf("png is %dx%d, want 1056x1248 (11 x 13 in at 96 dpi)", w, h)
	}
	notBlank(t, img)

	s, err := Plot(in, SVG, PlotOptions{})
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
	a := craftDoc("open",
		craft(t, fixture{name: "GET", mode: "open", rate: 5000, seconds: 4, base: 0.1, interval: 1, seed: 4}),
		craft(t, fixture{name: "SET", mode: "open", rate: 5000, seconds: 4, base: 0.12, interval: 1, seed: 5}))
	b := craftDoc("open",
		craft(t, fixture{name: "GET", mode: "open", rate: 5000, seconds: 4, base: 0.1, stallMs: 50, stallEvery: 2, interval: 0.5, seed: 6}),
		craft(t, fixture{name: "INCR", mode: "open", rate: 5000, seconds: 2, base: 0.1, interval: 0.5, seed: 7}))
	in := []Input{input(t, "before.json", a), input(t, "after.json", b)}
	notBlank(t, plotPNG(t, in, "two.png"))
	spec, series, err := plotSVGs(in, PlotOptions{})
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
	test := craft(t, fixture{name: "GET", mode: "open", rate: 1000, seconds: 1, base: 0.1, interval: 1, seed: 8})
	test.Intervals, test.IntervalS = nil, 0
	in := []Input{input(t, "old.json", craftDoc("open", test))}
	spec, series, err := plotSVGs(in, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, spec, "GET — response")
	checkSVG(t, series, "no interval series in these files")
	if _, err := Plot(in, PNG, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Text from the documents (test names come from command templates) is
// escaped in the SVG.
func TestPlotEscapesNames(t *testing.T) {
	t.Parallel()
	test := craft(t, fixture{name: `<script>alert("x")</script> & co`, mode: "closed", rate: 1000, seconds: 1, base: 0.1, interval: 0.5, seed: 9})
	spec, series, err := plotSVGs([]Input{input(t, "x.json", craftDoc("closed", test))}, PlotOptions{})
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
