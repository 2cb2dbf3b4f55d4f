package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

// fillCommand is `pacer fill`: write every key of a keyspace once, with
// pipelined SETs, so that GET workloads hit.
func fillCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		connsFlag(16),
		&cli.IntFlag{Name: "P", Value: 64, Usage: "pipeline `NUMREQ` requests per batch", Category: catLoad},
		&cli.StringFlag{Name: "r", Usage: "number of keys `N` (required)", Category: catWorkload},
		&cli.StringFlag{Name: "d", Value: "3", Usage: "value `SIZE`: 32, 32-1024 or 64:8,4096:2 (at most 512 MiB)", Category: catWorkload},
		&cli.StringFlag{Name: "command", Value: experiment.FillCommand, Usage: "the `TEMPLATE` each key is written with; __key__ runs through 0 … N-1 (with --cluster: " + experiment.ClusterFillCommand + ", the keys the tests read)", Category: catWorkload},
		seedFlag("seeds the value sizes"),
	)
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "no progress bar",
		jsonUse:   "write the fill as pacer.result/v1 to `FILE` (- for stdout)",
		errorsUse: "print error replies on stderr, at most one per second, and keep going (without -e the first ends the fill, exit 1)",
		sloUse:    "`CLAUSES` the fill must meet, e.g. p99<5ms,errors<0.1%; a miss exits 3",
	})...)
	flags = append(flags, clusterFlags()...)
	return withHelp(&cli.Command{
		Name:   "fill",
		Usage:  "prefill a keyspace: SET key:000000000000 … key:<N-1> with values of -d bytes",
		Flags:  flags,
		Action: fillAction,
	},
		"pacer fill --embedded -r 100000 -d 64:8,4096:2",
		"pacer fill -h HOST -r 1000000 -d 100 -c 32 -P 128",
	)
}

func fillAction(c *cli.Context) error {
	o, sentinels, err := targetOptions(c)
	if err != nil {
		return err
	}
	tgt := &endpoint.Target{Options: o, Cluster: c.Bool("cluster"), Sentinels: sentinels}
	if c.Args().Len() > 0 {
		return usageErrorf("fill takes no arguments, got %q (the command is --command)", c.Args().First())
	}
	if !c.IsSet("r") {
		return usageErrorf("-r N is required: the number of keys to fill")
	}
	n, err := strconv.ParseUint(strings.TrimSpace(c.String("r")), 10, 64)
	if err != nil || n == 0 {
		return usageErrorf("-r %q: want a number of keys above 0", c.String("r"))
	}
	sizes, err := parseSizes(c, false)
	if err != nil {
		return err
	}
	conns, err := parseConns(c)
	if err != nil {
		return err
	}
	pipeline, err := parsePipeline(c)
	if err != nil {
		return err
	}
	out, err := parseOutput(c)
	if err != nil {
		return err
	}
	command := experiment.FillTemplate(c.String("command"), c.IsSet("command"), c.Bool("cluster"))
	fc, err := experiment.NewFill(command, n, sizes, conns, pipeline)
	if err != nil {
		return err
	}
	seed := parseSeed(c)
	fc.Seed, fc.Interval, fc.ContinueOnError = seed, out.interval, out.showErrs
	e, err := openEnv(c, envConfig{target: tgt, files: out.files, quiet: out.quiet, mode: "closed"})
	if err != nil {
		return err
	}
	defer e.close()
	stdout := e.out
	exp := e.experiment(out.showErrs)
	exp.Watch = func(experiment.Watched) (func(*scheduler.Live), func()) {
		live := make(chan *scheduler.Live, 1)
		stopBar := func() {}
		if !out.quiet {
			stopBar = watch.FillBar(watch.On(e.stderr), n, live)
		}
		onStart, endMetrics := e.metrics.Hook("fill", metrics.ModeClosed, func(l *scheduler.Live) { live <- l })
		return onStart, func() { endMetrics(); stopBar() }
	}
	fill, err := exp.PlanFill(c.Context, fc)
	if err != nil {
		return err
	}
	e.askServer()
	exp.Server = e.server
	e.noteConfig()
	if err := fill.Dial(c.Context); err != nil {
		return failed(err)
	}
	// stdout starts with the fill's own line (scripts read it); the
	// identity goes with the progress, on stderr.
	fmt.Fprintln(e.stderr, text.ServerLine(e.server.ID))
	res, st, err := fill.Run(c.Context)
	if usage.Is(err) {
		return err
	}
	var t *report.Test
	var jd verdict.Judgement
	if res != nil {
		var terr error
		if t, jd, terr = fill.Judge(res, st, out.slo); terr != nil {
			return failed(terr)
		}
	}
	if res != nil && out.jsonPath != "" {
		e.doc.Interrupted, e.doc.Tests = res.Interrupted, []report.Test{*t}
		e.doc.Config = echoConfig(c.Context, fc.RunConfig(e.target.Options, sizes), map[string]any{"keys": n, "command": command})
		if werr := e.writeFiles(); werr != nil {
			return failed(werr)
		}
	}
	if err != nil {
		return failed(err)
	}
	if res.Interrupted {
		fmt.Fprintf(stdout, "fill interrupted: %d of %d keys written\n", res.Counts.Completed, n)
		printSeed(stdout, seed)
		return exitCode(exitInterrupted)
	}
	fmt.Fprintf(stdout, "filled %d keys (%s bytes each) in %.2f s: %.0f keys/s\n",
		res.Counts.Completed, sizes, res.Window.Seconds(), res.AchievedRate())
	fmt.Fprintln(stdout, text.ServerBrief(st))
	printSeed(stdout, seed)
	if s := t.SLO; s != nil {
		for _, l := range s.Lines() {
			fmt.Fprintf(stdout, "fill: %s\n", l)
		}
	}
	var end verdict.Ending
	judged(e.stderr, &end, t, jd) // a missed SLO: 3 (or 4); nothing completed: 1
	if code := end.Code(); code != exitOK {
		return exitCode(code)
	}
	return nil
}
