package plots_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/plots"
)

// Plot draws the percentile spectrum and the interval series of saved
// results: here a synthetic open-model run of a server that stalls 50 ms
// every second, as a PNG.
func ExamplePlot() {
	test, err := report.Synthetic(report.SyntheticRun{Name: "GET", Mode: "open", Rate: 2000, Seconds: 2, Base: 0.1,
		StallMs: 50, StallEvery: 1, Interval: 0.5, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	doc := report.SyntheticDocument("open", test)
	b, err := doc.Marshal()
	if err != nil {
		log.Fatal(err)
	}
	in, err := report.ReadInput("run.json", b)
	if err != nil {
		log.Fatal(err)
	}
	format, err := plots.PlotFormat("run.png")
	if err != nil {
		log.Fatal(err)
	}
	png, err := plots.Plot([]report.Input{in}, format, plots.PlotOptions{Title: "GET at 2000/s"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(format, bytes.HasPrefix(png, []byte("\x89PNG")))
	// Output: png true
}
