package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// --repeat and --ci, shared by run, bench and sweep.

// maxRepeat bounds --repeat.
const maxRepeat = 1000

func repeatFlag() cli.Flag {
	return &cli.IntFlag{Name: "repeat", Value: 1, Usage: "run each test (sweep: each point) `N` times and report the median and min–max of each figure; the JSON keeps every run", Category: catLoad}
}

func ciFlag() cli.Flag {
	return &cli.BoolFlag{Name: "ci", Usage: "print a 95% confidence interval for each percentile (order statistics)", Category: catOutput}
}

// parseRepeat reads --repeat.
func parseRepeat(c *cli.Context) (int, error) {
	n := c.Int("repeat")
	if n < 1 || n > maxRepeat {
		return 0, usageErrorf("--repeat %d: want 1 to %d runs", n, maxRepeat)
	}
	return n, nil
}

// pool merges the runs of one test into one result (histograms merged,
// counts and windows summed); one run is returned as is. The runs are
// left unchanged.
func pool(rs []*scheduler.Result) *scheduler.Result {
	if len(rs) == 1 {
		return rs[0]
	}
	p := cloneResult(rs[0])
	for _, r := range rs[1:] {
		mergeResult(p, r)
	}
	return p
}

// cloneResult copies r deeply enough that merging into the copy leaves r
// as it was: histograms, maps and slices are the copy's own.
func cloneResult(r *scheduler.Result) *scheduler.Result {
	c := *r
	c.Response, c.Service, c.Lag, c.Micros = copyHist(r.Response), copyHist(r.Service), copyHist(r.Lag), copyHist(r.Micros)
	c.ErrorCodes = maps.Clone(r.ErrorCodes)
	if r.TLS != nil {
		c.TLS = &scheduler.TLSHandshakes{}
		c.TLS.Merge(r.TLS)
	}
	c.Intervals = slices.Clone(r.Intervals)
	c.Commands = make([]scheduler.CommandResult, len(r.Commands))
	for i, cr := range r.Commands {
		cc := cr
		cc.Response, cc.Service, cc.Lag = copyHist(cr.Response), copyHist(cr.Service), copyHist(cr.Lag)
		cc.ErrorCodes = maps.Clone(cr.ErrorCodes)
		cc.Intervals = slices.Clone(cr.Intervals)
		c.Commands[i] = cc
	}
	if r.Commands == nil {
		c.Commands = nil
	}
	c.Nodes = slices.Clone(r.Nodes)
	for i := range c.Nodes {
		c.Nodes[i].Response = copyHist(r.Nodes[i].Response)
	}
	return &c
}

func copyHist(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if h == nil {
		return nil
	}
	c := hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	c.Merge(h)
	return c
}

// testJSON converts a result to its JSON test with its percentile notes
// (and their confidence intervals with ci).
func testJSON(r *scheduler.Result, ci bool) (report.Test, error) {
	t, err := report.FromResult(r)
	if err != nil {
		return t, err
	}
	t.ResponsePercentiles = report.PercentileStats(r.Response, ci)
	return t, nil
}

// repeatsOf summarises the runs of one test: their figures and JSON, each
// run with its own SLO clauses and verdict (the trust rule applied to it
// alone; the test's own are those of the runs pooled).
func repeatsOf(rs []*scheduler.Result, id string, ci bool, slo report.SLO) (*report.Repeats, error) {
	figs := make([]map[string]float64, len(rs))
	runs := make([]report.Test, len(rs))
	for i, r := range rs {
		figs[i] = report.Figures(r)
		sr, err := slo.Check(r)
		if err != nil {
			return nil, err
		}
		judgeSilently(r, sr)
		t, err := testJSON(r, ci)
		if err != nil {
			return nil, err
		}
		t.ID, t.SLO = id, sr
		runs[i] = t
	}
	return report.NewRepeats(figs, runs), nil
}

// judgeSilently sets r's verdict by the trust rule (report.Judge) without
// a word on stderr: for the runs of a repeated test, which is judged, and
// speaks, as their pool.
func judgeSilently(r *scheduler.Result, slo *report.SLOResult) {
	j := report.Judge(r, slo)
	r.Verdict, r.VerdictReason = j.Verdict, j.Reason
}

// runName labels run k (from 0) of n of a test.
func runName(title string, k, n int) string {
	if n <= 1 {
		return title
	}
	return fmt.Sprintf("%s (run %d/%d)", title, k+1, n)
}

// writeNotes writes the percentile notes of a result's response time
// (and with ci their intervals), and with several runs the repeats'
// table.
func writeNotes(w io.Writer, r *scheduler.Result, ci bool, rep *report.Repeats) error {
	if err := report.WritePercentileNotes(w, r.Response, ci); err != nil {
		return err
	}
	if rep != nil && rep.N > 1 {
		if err := report.WriteRepeats(w, "repeats", rep); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}
