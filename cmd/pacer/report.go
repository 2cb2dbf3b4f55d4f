package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment/compare"
	"github.com/pacer-load/pacer/report"
)

// maxDocumentSize bounds a result document pacer report reads: an hour of
// one-second intervals is a few MB.
const maxDocumentSize = 256 << 20

// maxInputTotal bounds what pacer report and pacer merge read in all (a
// variable for tests).
var maxInputTotal int64 = 2 * maxDocumentSize

func reportCommand() *cli.Command {
	return withHelp(&cli.Command{
		Name:      "report",
		Usage:     "re-render saved results (--json files): as text, side by side, as plots or as an HTML page",
		ArgsUsage: "FILE.json...",
		Description: "One file prints as its run printed it; several print side by side, one column per file, with\n" +
			"each percentile's difference from the first file. - reads a document from stdin.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plot", Usage: "draw the percentile spectrum and the interval series to `OUT.png` or OUT.svg", Category: catOutput},
			&cli.StringFlag{Name: "html", Usage: "write one self-contained page (configuration, tables, plots, verdicts) to `OUT.html`", Category: catOutput},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Action: reportAction,
	},
		"pacer report run.json",
		"pacer report before.json after.json",
		"pacer report compare.json --plot compare.png --html compare.html",
	)
}

func reportAction(c *cli.Context) error {
	plotPath, htmlPath := c.String("plot"), c.String("html")
	plotSet, htmlSet := c.IsSet("plot"), c.IsSet("html")
	// Flags may follow the files (pacer report a.json --plot a.png):
	// urfave/cli stops at the first argument, so they are picked out here.
	var paths []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == stdoutPath || !strings.HasPrefix(a, "-"):
			paths = append(paths, a)
			continue
		case name != "plot" && name != "html":
			return usageErrorf("flag provided but not defined: %s", a)
		case !hasValue && i+1 >= len(args):
			return usageErrorf("flag needs an argument: %s", a)
		case !hasValue:
			i++
			value = args[i]
		}
		if name == "plot" {
			plotPath, plotSet = value, true
		} else {
			htmlPath, htmlSet = value, true
		}
	}
	if len(paths) == 0 {
		return usageErrorf("report: give one or more result files (written with --json)")
	}
	format := ""
	if plotSet {
		var err error
		if format, err = report.PlotFormat(plotPath); err != nil {
			return usageErrorf("--plot %v", err)
		}
		if err := checkOutputPath(plotPath); err != nil {
			return usageErrorf("--plot: %v", err)
		}
	}
	if htmlSet {
		if htmlPath == "" {
			return usageErrorf("--html: give a file name")
		}
		if err := checkOutputPath(htmlPath); err != nil {
			return usageErrorf("--html: %v", err)
		}
	}
	if err := report.CheckOutputsApart(paths, []report.NamedPath{{Flag: "--plot", Path: plotPath}, {Flag: "--html", Path: htmlPath}}); err != nil {
		return usageErrorf("%v", err)
	}
	inputs, err := readInputs(paths, os.Stdin)
	if err != nil {
		return err
	}
	var text bytes.Buffer
	if err := renderReport(&text, inputs); err != nil {
		return failed(err)
	}
	// Files before stdout, as the load commands write theirs.
	if format != "" {
		b, err := report.Plot(inputs, format)
		if err != nil {
			return failed(err)
		}
		if err := writeOutput(c.App.Writer, plotPath, b); err != nil {
			return failed(err)
		}
	}
	out := c.App.Writer
	if htmlPath != "" {
		b, err := report.HTML(report.Page{Inputs: inputs, Text: text.String()})
		if err != nil {
			return failed(err)
		}
		if err := writeOutput(c.App.Writer, htmlPath, b); err != nil {
			return failed(err)
		}
		if htmlPath == stdoutPath {
			out = c.App.ErrWriter // stdout carries the page
		}
	}
	if _, err := out.Write(text.Bytes()); err != nil {
		return err
	}
	return verdictsExit(c.App.ErrWriter, inputs)
}

// verdictsExit exits with the code of the documents' verdicts (see
// report.DocumentOutcome), saying on stderr which tests make it.
func verdictsExit(stderr io.Writer, inputs []report.Input) error {
	worst := report.Trusted
	for _, in := range inputs {
		o, lines := report.DocumentOutcome(in.Doc)
		worst = report.Worse(worst, o)
		for _, l := range lines {
			fmt.Fprintf(stderr, "pacer: %s: %s\n", in.Label, l)
		}
	}
	if code := outcomeCode(worst); code != exitOK {
		return exitCode(code)
	}
	return nil
}

// readInputs reads and checks every document; "-" is stdin (once). Files
// are labelled by their base names, or by their paths when two share one.
func readInputs(paths []string, stdin io.Reader) ([]report.Input, error) {
	base := map[string]int{}
	for _, p := range paths {
		base[filepath.Base(p)]++
	}
	stdinRead := false
	var out []report.Input
	left := maxInputTotal
	for _, p := range paths {
		var data []byte
		var err error
		label := filepath.Base(p)
		if base[label] > 1 {
			label = p
		}
		switch {
		case p == stdoutPath && stdinRead:
			return nil, usageErrorf("- (stdin) given twice")
		case p == stdoutPath:
			stdinRead, label = true, "stdin"
			data, err = readLimited(stdin, min(maxDocumentSize, left))
		default:
			var f *os.File
			if f, err = os.Open(p); err == nil {
				data, err = readLimited(f, min(maxDocumentSize, left))
				f.Close()
			}
		}
		if err != nil && left < maxDocumentSize {
			err = fmt.Errorf("%v (the files given hold more than %s in all)", err, formatBytes(maxInputTotal))
		}
		if err != nil {
			return nil, usageErrorf("%s: %v", p, err)
		}
		left -= int64(len(data))
		in, err := report.ReadInput(label, data)
		if err != nil {
			return nil, usageErrorf("%s: %v", p, err)
		}
		out = append(out, in)
	}
	return out, nil
}

// readLimited reads a result document of at most limit bytes. What does
// not begin as a JSON object (after white space) is refused after its
// first bytes, so /dev/zero or a binary file costs nothing.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	br := bufio.NewReader(r)
	for n := 0; ; n++ {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, errors.New("empty: not a result document")
		}
		if err != nil {
			return nil, err
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') && int64(n) < limit {
			continue
		}
		if c != '{' {
			return nil, errors.New("not a result document (a JSON object written by --json)")
		}
		br.UnreadByte()
		break
	}
	b, err := io.ReadAll(io.LimitReader(br, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %s: not a result document", formatBytes(limit))
	}
	return b, nil
}

// renderReport writes the text report: one document as its run printed
// it, several side by side.
func renderReport(w io.Writer, in []report.Input) error {
	if len(in) > 1 {
		return report.SideBySide(w, in)
	}
	d := in[0].Doc
	if runs := compare.FromDocument(d); runs != nil {
		return compare.WriteDocument(w, d, runs)
	}
	return report.Render(w, d)
}
