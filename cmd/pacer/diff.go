package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/plots"
	reporttext "github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/verdict"
)

func diffCommand() *cli.Command {
	return withHelp(&cli.Command{
		Name:      "diff",
		Usage:     "did it get worse? compare a candidate's results with a baseline's, each change with its 95% interval and a word",
		ArgsUsage: "BASELINE_FILE CANDIDATE_FILE | BASELINE_FILE... -- CANDIDATE_FILE...",
		Description: "Tests match by id (a sweep's steps by rate too). For each, the percentiles, throughput and error rate\n" +
			"of both sides, the change (ms and %), its 95% confidence interval and one word: worse or better (the\n" +
			"interval excludes no change and the change is beyond --equivalence), same (the whole interval lies\n" +
			"within ±--equivalence) or cannot tell (with why). Several files per side are repeats: the interval\n" +
			"then holds the spread between runs; one run per side gets a block bootstrap over its own intervals,\n" +
			"which cannot see that spread. Without --max-regression diff exits 0 once it has compared; with it,\n" +
			"3 when the candidate is surely worse beyond an allowance, 0 when it surely is not, 4 when it cannot\n" +
			"tell. See docs/diff.md.",
		Flags:  diffFlags(),
		Action: diffAction,
	},
		"pacer diff before.json after.json",
		"pacer diff a1.json a2.json a3.json -- b1.json b2.json b3.json --max-regression 'p99:10%,throughput:5%'",
		"pacer diff before.json after.json --json diff.json --plot diff.png --html diff.html",
	)
}

// diffFlags are the flags of diff; ab has them too (but --title).
func diffFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "max-regression", Usage: "a gate of `CLAUSES` FIGURE:ALLOWANCE, e.g. p99:10%,p99.9:20%,throughput:5%,errors:0.1% (errors in percentage points): exit 3 when the candidate is surely worse beyond one, 0 when surely within all, 4 when it cannot tell", Category: catTrust},
		&cli.StringFlag{Name: "equivalence", Value: "5%", Usage: "`SHARE` within which a change of a latency or the throughput is no change: same needs the whole interval within ± it", Category: catTrust},
		&cli.StringFlag{Name: "equivalence-errors", Value: "0.1%", Usage: "the error rate's margin of no change, in percentage `POINTS` of the scheduled requests", Category: catTrust},
		&cli.StringFlag{Name: "percentiles", Usage: "`LIST` of the percentiles to compare, e.g. 50,90,99,99.9,99.99", DefaultText: "50,90,99,99.9 and the gate's", Category: catOutput},
		&cli.StringFlag{Name: "json", Usage: "write the comparison as pacer.diff/v1 to `FILE` (- for stdout)", Category: catOutput},
		&cli.StringFlag{Name: "plot", Usage: "draw both sides' percentile spectra with their interval bands, and the change by percentile, to `OUT.png` or OUT.svg", Category: catOutput},
		&cli.StringFlag{Name: "html", Usage: "write one self-contained page (tables, plots, words, gate) to `OUT.html`", Category: catOutput},
		&cli.StringFlag{Name: "title", Usage: "title the plots and the page `TEXT`", DefaultText: "the sides' files", Category: catOutput},
	}
}

// diffOutput is what diff's and ab's comparison flags asked for.
type diffOutput struct {
	opts                   diff.Options
	json, plot, html, text string
	plotFormat             string
}

// diffSettings reads the comparison flags: from the command's own flags,
// then from vals, the values given after the files (nil: none).
func diffSettings(c *cli.Context, vals map[string]*string) (diffOutput, error) {
	get := func(name string) (string, bool) {
		if v, ok := vals[name]; ok && v != nil && *v != "\x00" {
			return *v, true
		}
		return c.String(name), c.IsSet(name)
	}
	var o diffOutput
	o.opts.Version, o.opts.Spectrum = version, true
	var err error
	if s, set := get("max-regression"); set {
		if o.opts.Gate, err = diff.ParseGate(s); err != nil {
			return o, err
		}
	}
	s, _ := get("equivalence")
	if o.opts.Equivalence, err = parseShare("--equivalence", s, 100); err != nil {
		return o, err
	}
	o.opts.Equivalence /= 100
	s, _ = get("equivalence-errors")
	if o.opts.ErrorEquivalence, err = parseShare("--equivalence-errors", s, 100); err != nil {
		return o, err
	}
	if s, set := get("percentiles"); set {
		if o.opts.Percentiles, err = report.ParsePercentiles(s); err != nil {
			return o, usageErrorf("%v", err)
		}
	}
	o.json, _ = get("json")
	o.plot, _ = get("plot")
	o.html, _ = get("html")
	o.text, _ = get("title")
	if _, set := get("plot"); set {
		if o.plotFormat, err = plots.PlotFormat(o.plot); err != nil {
			return o, usageErrorf("--plot %v", err)
		}
	}
	if _, set := get("html"); set && o.html == "" {
		return o, usageErrorf("--html: give a file name")
	}
	for _, f := range []struct{ flag, path string }{{"--json", o.json}, {"--plot", o.plot}, {"--html", o.html}} {
		if err := report.CheckOutputPath(f.path); err != nil {
			return o, usageErrorf("%s: %v", f.flag, err)
		}
	}
	n := 0
	for _, p := range []string{o.json, o.plot, o.html} {
		if p == stdoutPath {
			n++
		}
	}
	if n > 1 {
		return o, usageErrorf("only one of --json, --plot and --html can go to stdout")
	}
	return o, nil
}

// parseShare reads a percentage above 0 and below limit: "5%" or "5".
func parseShare(flag, s string, limit float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) || !(v > 0 && v < limit) {
		return 0, usageErrorf("%s %q: want a percentage above 0 and below %g, such as 5%%", flag, s, limit)
	}
	return v, nil
}

// diffValueFlags are diff's flags that take a value, as Trailing reads
// them after the files.
var diffValueFlags = []string{"max-regression", "equivalence", "equivalence-errors", "percentiles", "json", "plot", "html", "title"}

func diffAction(c *cli.Context) error {
	vals := map[string]*string{}
	for _, n := range diffValueFlags {
		v := "\x00" // not given after the files
		vals[n] = &v
	}
	// BASELINE... -- CANDIDATE...: flags may follow the files on either
	// side of the "--".
	args := c.Args().Slice()
	var sides [][]string
	cut := -1
	for i, a := range args {
		if a == "--" {
			cut = i
			break
		}
	}
	parts := [][]string{args}
	if cut >= 0 {
		parts = [][]string{args[:cut], args[cut+1:]}
	}
	for _, part := range parts {
		paths, _, err := clihelp.Trailing(part, vals, nil)
		if err != nil {
			return err
		}
		sides = append(sides, paths)
	}
	if cut < 0 {
		if len(sides[0]) != 2 {
			return usageErrorf("diff: give a baseline's and a candidate's result files (BASELINE.json CANDIDATE.json), or several of each: A1.json A2.json -- B1.json B2.json")
		}
		sides = [][]string{sides[0][:1], sides[0][1:]}
	}
	if len(sides[0]) == 0 || len(sides[1]) == 0 {
		return usageErrorf("diff: give at least one result file on each side of --")
	}
	out, err := diffSettings(c, vals)
	if err != nil {
		return err
	}
	all := append(append([]string{}, sides[0]...), sides[1]...)
	if err := report.CheckOutputsApart(all, []report.NamedPath{{Flag: "--json", Path: out.json}, {Flag: "--plot", Path: out.plot}, {Flag: "--html", Path: out.html}}); err != nil {
		return usageErrorf("%v", err)
	}
	inputs, err := peers.ReadInputs(c.Context, all, os.Stdin)
	if err != nil {
		return err
	}
	base := diff.Side{Inputs: inputs[:len(sides[0])]}
	cand := diff.Side{Inputs: inputs[len(sides[0]):]}
	d, err := diff.Compare(base, cand, out.opts)
	if err != nil {
		return err
	}
	return writeDiff(c.App.Writer, c.App.ErrWriter, d, out)
}

// writeDiff writes a comparison's files (--json, --plot, --html) and its
// table, and exits with the gate's code, saying why on stderr when it is
// not 0.
func writeDiff(stdout, stderr io.Writer, d *diff.Document, out diffOutput) error {
	text := stdout
	if out.json != "" {
		b, err := d.Marshal()
		if err != nil {
			return failed(err)
		}
		if err := report.WriteOutputTo(stdout, out.json, b); err != nil {
			return failed(err)
		}
	}
	if out.plotFormat != "" {
		b, err := plots.DiffPlot(d, out.plotFormat, plots.PlotOptions{Title: out.text})
		if err != nil {
			return failed(err)
		}
		if err := report.WriteOutputTo(stdout, out.plot, b); err != nil {
			return failed(err)
		}
	}
	var tb bytes.Buffer
	if err := reporttext.DiffText(&tb, d); err != nil {
		return failed(err)
	}
	if out.html != "" {
		b, err := plots.DiffHTML(d, tb.String(), out.text)
		if err != nil {
			return failed(err)
		}
		if err := report.WriteOutputTo(stdout, out.html, b); err != nil {
			return failed(err)
		}
	}
	for _, p := range []string{out.json, out.plot, out.html} {
		if p == stdoutPath {
			text = stderr // stdout carries the file
		}
	}
	if _, err := text.Write(tb.Bytes()); err != nil {
		return err
	}
	return gateExit(stderr, d)
}

// gateExit is the exit of a comparison: the gate's code (0 without one),
// with the gate's line on stderr when it failed or could not tell.
func gateExit(stderr io.Writer, d *diff.Document) error {
	o := diff.Outcome(d)
	if o == verdict.Pass {
		return nil
	}
	fmt.Fprintf(stderr, "pacer: --max-regression %s: %s: %s\n", d.Gate.Spec, o, oneLine(d.Gate.Reason))
	return exitCode(o.ExitCode())
}

// readDiffFile reads a pacer.diff/v1 document when paths is one regular
// file holding one (nil, nil otherwise: pacer report reads it as a
// result, and says what is wrong with it).
func readDiffFile(paths []string) (*diff.Document, error) {
	if len(paths) != 1 || paths[0] == stdoutPath {
		return nil, nil
	}
	d, err := diff.ReadFile(paths[0])
	if err != nil {
		return nil, usageErrorf("%s: %v", paths[0], err)
	}
	return d, nil
}
