package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/verdict"
)

func mergeCommand() *cli.Command {
	return withHelp(&cli.Command{
		Name:      "merge",
		Usage:     "add the results of the shards of one timeline (--shard K/N) into one result",
		ArgsUsage: "SHARD.json... -o OUT.json",
		Description: "Counts, bytes and errors are summed, histograms added (every percentile is that of all the\n" +
			"requests), intervals with the same start merged, rates taken over the union of the windows;\n" +
			"a cluster run's per-node results are merged node by node the same way.\n" +
			"Results of different workloads, timelines or start times are refused (exit 2), and so is a\n" +
			"missing shard unless --partial. The merged result is a pacer.result/v1 that pacer report reads.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Value: stdoutPath, Usage: "write the merged JSON to `FILE` (- for stdout)", Category: catOutput},
			&cli.BoolFlag{Name: "partial", Usage: "merge the shards given when some are missing (the result says which it holds)", Category: catOutput},
			&cli.BoolFlag{Name: "q", Usage: "quiet: print nothing but errors", Category: catOutput},
		},
		Action: mergeAction,
	},
		"pacer merge shard-1.json shard-2.json shard-3.json -o all.json",
		"pacer merge --partial shard-*.json -o some.json",
	)
}

func mergeAction(c *cli.Context) error {
	outPath, partial, quiet := c.String("o"), c.Bool("partial"), c.Bool("q")
	// Flags may follow the files (pacer merge a.json b.json -o all.json).
	paths, _, err := clihelp.Trailing(c.Args().Slice(), map[string]*string{"o": &outPath}, map[string]*bool{"partial": &partial, "q": &quiet})
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageErrorf("merge: give the shards' result files (written with --shard K/N --json FILE)")
	}
	if outPath == "" {
		return usageErrorf("-o: give a file name, or - for stdout")
	}
	if err := report.CheckOutputPath(outPath); err != nil {
		return usageErrorf("-o: %v", err)
	}
	if err := report.CheckOutputsApart(paths, []report.NamedPath{{Flag: "-o", Path: outPath}}); err != nil {
		return usageErrorf("%v", err)
	}
	inputs, err := peers.ReadInputs(c.Context, paths, os.Stdin)
	if err != nil {
		return err
	}
	in := make([]merge.Input, len(inputs))
	for i, x := range inputs {
		in[i] = merge.Input{Label: x.Label, Doc: x.Doc}
	}
	doc, err := merge.Merge(in, merge.Options{Partial: partial, Tool: report.Tool{Name: "pacer", Version: version}})
	if errors.Is(err, report.ErrMerge) {
		return usageErrorf("%v", err)
	}
	if err != nil {
		return failed(err)
	}
	verdict.Merged(doc)
	if err := report.WriteJSON(c.App.Writer, outPath, doc); err != nil {
		return failed(err)
	}
	verdicts := []report.Input{{Label: "merged", Doc: doc}}
	if quiet {
		return verdictsExit(c.App.ErrWriter, verdicts)
	}
	out := c.App.Writer
	if outPath == stdoutPath {
		out = c.App.ErrWriter // stdout carries the JSON
	}
	fmt.Fprintf(out, "merged shards %s of %d\n", joinInts(doc.Shard.Merged), doc.Shard.N)
	for i := range doc.Tests {
		if err := text.Quiet(out, &doc.Tests[i], report.TextOptions{}); err != nil {
			return failed(err)
		}
	}
	return verdictsExit(c.App.ErrWriter, verdicts)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
