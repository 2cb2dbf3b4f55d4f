package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment/compare"
	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/plots"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/verdict"
)

func reportCommand() *cli.Command {
	return withHelp(&cli.Command{
		Name:      "report",
		Usage:     "re-render saved results (--json files): as text, side by side, as plots or as an HTML page",
		ArgsUsage: "FILE.json...",
		Description: "One file prints as its run printed it; several print side by side, one column per file, with\n" +
			"each percentile's difference from the first file. - reads a document from stdin. A pacer diff\n" +
			"document (pacer.diff/v1) prints as pacer diff printed it, and draws its pictures.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plot", Usage: "draw the percentile spectrum and the interval series to `OUT.png` or OUT.svg", Category: catOutput},
			&cli.StringFlag{Name: "html", Usage: "write one self-contained page (configuration, tables, plots, verdicts) to `OUT.html`", Category: catOutput},
			&cli.StringFlag{Name: "title", Usage: "title the plots and the page `TEXT`", DefaultText: "the files' names", Category: catOutput},
			&cli.StringSliceFlag{Name: "label", Usage: "call the file FILE by NAME in the text, the plots and the page (`FILE=NAME`, repeatable)", DefaultText: "its file name", Category: catOutput},
		},
		Action: reportAction,
	},
		"pacer report run.json",
		"pacer report before.json after.json",
		"pacer report compare.json --plot compare.png --html compare.html",
		"pacer report a.json b.json --label a.json=before --label b.json=after --title 'Freeze demo' --plot demo.png",
	)
}

func reportAction(c *cli.Context) error {
	plotPath, htmlPath, title := c.String("plot"), c.String("html"), c.String("title")
	plotSet, htmlSet := c.IsSet("plot"), c.IsSet("html")
	var labels []string
	paths, set, err := clihelp.TrailingLists(c.Args().Slice(), map[string]*string{"plot": &plotPath, "html": &htmlPath, "title": &title}, nil,
		map[string]*[]string{"label": &labels})
	if err != nil {
		return err
	}
	labels = append(c.StringSlice("label"), labels...)
	plotSet, htmlSet = plotSet || set["plot"], htmlSet || set["html"]
	if len(paths) == 0 {
		return usageErrorf("report: give one or more result files (written with --json)")
	}
	format := ""
	if plotSet {
		if format, err = plots.PlotFormat(plotPath); err != nil {
			return usageErrorf("--plot %v", err)
		}
		if err := report.CheckOutputPath(plotPath); err != nil {
			return usageErrorf("--plot: %v", err)
		}
	}
	if htmlSet {
		if htmlPath == "" {
			return usageErrorf("--html: give a file name")
		}
		if err := report.CheckOutputPath(htmlPath); err != nil {
			return usageErrorf("--html: %v", err)
		}
	}
	if err := report.CheckOutputsApart(paths, []report.NamedPath{{Flag: "--plot", Path: plotPath}, {Flag: "--html", Path: htmlPath}}); err != nil {
		return usageErrorf("%v", err)
	}
	if d, err := readDiffFile(paths); d != nil || err != nil { // a pacer diff's document
		if err != nil {
			return err
		}
		return writeDiff(c.App.Writer, c.App.ErrWriter, d, diffOutput{plot: plotPath, plotFormat: format, html: htmlPath, text: title})
	}
	inputs, err := peers.ReadInputs(c.Context, paths, os.Stdin)
	if err != nil {
		return err
	}
	if err := report.Relabel(inputs, paths, labels); err != nil {
		return usageErrorf("%v", err)
	}
	var text bytes.Buffer
	if err := renderReport(&text, inputs); err != nil {
		return failed(err)
	}
	// Files before stdout, as the load commands write theirs.
	if format != "" {
		b, err := plots.Plot(inputs, format, plots.PlotOptions{Title: title})
		if err != nil {
			return failed(err)
		}
		if err := report.WriteOutputTo(c.App.Writer, plotPath, b); err != nil {
			return failed(err)
		}
	}
	out := c.App.Writer
	if htmlPath != "" {
		b, err := plots.HTML(plots.Page{Inputs: inputs, Text: text.String(), Title: title})
		if err != nil {
			return failed(err)
		}
		if err := report.WriteOutputTo(c.App.Writer, htmlPath, b); err != nil {
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
// verdict.OfDocument), saying on stderr which tests make it.
func verdictsExit(stderr io.Writer, inputs []report.Input) error {
	worst := verdict.Pass
	for _, in := range inputs {
		o, lines := verdict.OfDocument(in.Doc)
		worst = verdict.Worse(worst, o)
		for _, l := range lines {
			fmt.Fprintf(stderr, "pacer: %s: %s\n", oneLine(in.Label), oneLine(l))
		}
	}
	if code := worst.ExitCode(); code != exitOK {
		return exitCode(code)
	}
	return nil
}

// renderReport writes the text report: one document as its run printed
// it, several (or another tool's result) side by side.
func renderReport(w io.Writer, in []report.Input) error {
	if len(in) > 1 || in[0].Format != report.FormatPacer {
		return text.SideBySide(w, in)
	}
	d := in[0].Doc
	if runs := compare.FromDocument(d); runs != nil {
		return compare.WriteDocument(w, d, runs)
	}
	return text.Render(w, d)
}
