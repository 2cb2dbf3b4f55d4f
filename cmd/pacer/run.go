package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

func runCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.StringFlag{Name: "rate", Usage: "target `RATE` in requests per second: 2500, 10k, 1.5M, 0.5 (required, unless --stages)", Category: catLoad},
		&cli.DurationFlag{Name: "duration", Value: 10 * time.Second, Usage: "`DURATION` of each test's measured timeline", Category: catLoad},
		&cli.StringFlag{Name: "stages", Usage: "a rate that ramps linearly through `STAGES` DURATION:RATE,... from 0 (k6's ramping-arrival-rate), e.g. 30s:1k,2m:10k,1m:10k,30s:0; a 0s stage steps the rate; replaces --rate and --duration", Category: catLoad},
		&cli.DurationFlag{Name: "warmup", Usage: "send the first `DURATION` of the timeline but leave it out of the results (added before --duration; the first part of --stages)", Category: catLoad},
		&cli.Int64Flag{Name: "n", Usage: "`N` requests per test (instead of --duration; with both, whichever ends first)", DefaultText: "none", Category: catLoad},
		connsFlag(50),
		arrivalFlag(),
		seedFlag("seeds poisson arrivals and random keys (the JSON records it)"),
	)
	flags = append(flags, openLoadFlags("a request more than `DURATION` late when its turn comes (no connection, or all full) is counted unsent instead of sent")...)
	flags = append(flags, append(topologyFlags(), visibilityFlag())...)
	flags = append(flags, repeatFlag())
	flags = append(flags, decideFlag("with --slo, a budget `DURATION` (such as 1m) to reach a verdict in: wait up to 2s for a quiet host, run --duration and, while the verdict is inconclusive because of the client or its host, go on measuring the same timeline and judge everything measured every --duration (a sequential rule whose false-alarm rate is in docs/ci.md) until it decides or the budget ends"))
	flags = append(flags, shardFlags()...)
	flags = append(flags, workloadFlags(workloadSpec{
		tests:    "get",
		testsUse: "run the comma-separated `TESTS` (redis-benchmark names: ping,set,get,incr,...), or all: the whole suite",
		dataUse:  "value `SIZE` in bytes: 32, a range 32-1024, or weighted 64:8,4096:2 (at most 512 MiB)",
		keysUse:  "random keys: __rand_int__ and __key__ become 12-digit numbers below `N`",
	})...)
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "quiet: one line per test, no progress",
		jsonUse:   "write the pacer.result/v1 JSON to `FILE` (- for stdout)",
		errorsUse: "print error replies on stderr, at most one per second",
		sloUse:    "`CLAUSES` every test must meet, e.g. p99<5ms,p99.9<20ms,errors<0.1%; a miss exits 3",
		latency:   true,
	})...)
	flags = append(flags, openTailFlags("the lag is high: inconclusive (verdict generator_behind) when it is also at least 10% of the response p99, or could explain an --slo violation", true)...)
	return withHelp(&cli.Command{
		Name:      "run",
		Usage:     "open model: send on a fixed-rate timeline, measure latency from the intended send time",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Without -t or a command, run sends GET, as sweep does; -t all runs redis-benchmark's whole\n" +
			"suite, one test after another.",
		Flags:  flags,
		Action: runAction,
	},
		"pacer run --embedded --rate 5k --duration 5s -t get,set -r 1000",
		"pacer run -h HOST --rate 20k --duration 30s -t get -r 100000 --slo 'p99<2ms,errors<0.1%' --json run.json",
	)
}

// runConfig is everything `pacer run` was asked to do, validated.
type runConfig struct {
	experiment.Shape
	// destination: with --cluster, conns connections to each primary.
	destination
	conns    int
	seed     uint64
	load     experiment.OpenLoad
	interval time.Duration
	showErrs bool
	slo      verdict.SLO
	work     *workload
	quiet    bool
	files    resultFiles
	text     report.TextOptions
	repeat   int           // runs per test (--repeat)
	ci       bool          // confidence intervals of the percentiles (--ci)
	decide   time.Duration // --decide-within's budget (0: none)
}

func parseRunConfig(c *cli.Context) (*runConfig, error) {
	cfg := &runConfig{}
	var err error
	if cfg.destination, err = parseDestination(c); err != nil {
		return nil, err
	}
	shape := experiment.ShapeFlags{Duration: c.Duration("duration"), DurationSet: c.IsSet("duration"),
		Warmup: c.Duration("warmup"), WarmupSet: c.IsSet("warmup"), Rate: given(c, "rate"), Stages: given(c, "stages")}
	if c.IsSet("n") {
		shape.Requests = new(c.Int64("n"))
	}
	if cfg.Shape, err = shape.Parse(); err != nil {
		return nil, err
	}
	if cfg.conns, err = parseConns(c); err != nil {
		return nil, err
	}
	cfg.seed = parseSeed(c)
	out, err := parseOutput(c)
	if err != nil {
		return nil, err
	}
	cfg.showErrs, cfg.slo, cfg.quiet, cfg.interval = out.showErrs, out.slo, out.quiet, out.interval
	if cfg.load, err = parseOpenLoad(c, cfg.conns, cfg.slo); err != nil {
		return nil, err
	}
	cfg.target.MaxInflight, cfg.target.MaxBuffer = cfg.load.MaxInflight, cfg.load.MaxBuffer
	cfg.files, cfg.text = out.files, out.text
	if cfg.repeat, err = parseRepeat(c); err != nil {
		return nil, err
	}
	cfg.ci = c.Bool("ci")
	if cfg.decide, err = parseDecide(c, cfg.slo, cfg.Duration+cfg.Warmup); err != nil {
		return nil, err
	}
	if cfg.decide > 0 {
		switch {
		case cfg.repeat > 1:
			return nil, usageErrorf("--decide-within measures one run until it decides: not with --repeat")
		case cfg.Stages != nil || cfg.Requests > 0:
			return nil, usageErrorf("--decide-within goes on at the test's rate: not with --stages or -n")
		case cfg.shard.Sharded() || c.IsSet("start-at") || c.IsSet("start-in"):
			return nil, usageErrorf("--decide-within decides each process's run on its own: not with --shard, --start-at or --start-in")
		}
	}
	if cfg.work, err = parseOpenWorkload(c, "catalogue tests"); err != nil {
		return nil, err
	}
	if err := experiment.CheckMaxBuffer(cfg.work.list(), cfg.target.MaxBuffer); err != nil {
		return nil, err
	}
	if err := fitMemory(c, cfg.conns, &cfg.load, cfg.work); err != nil {
		return nil, err
	}
	cfg.target.MaxInflight, cfg.target.MaxBuffer = cfg.load.MaxInflight, cfg.load.MaxBuffer
	return cfg, nil
}

func (cfg *runConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := cfg.load.Echo(cfg.Warmup)
	extra["arrival"] = cfg.load.Arrival
	if cfg.Stages != nil {
		extra["stages"] = cfg.StageArg
	}
	if cfg.cluster {
		extra["cluster"] = true // conns is per primary
	}
	return echoWork(ctx, report.RunConfig{Target: cfg.target.Addr, Embedded: faults, Conns: cfg.conns, Dial: cfg.target,
		Seed: cfg.seed, Rate: cfg.Rate, Duration: cfg.Duration, Requests: cfg.Requests}, cfg.work, extra)
}

func runAction(c *cli.Context) error {
	cfg, err := parseRunConfig(c)
	if err != nil {
		return err
	}
	e, err := openEnv(c, envConfig{target: cfg.newTarget(), place: cfg.shard,
		files: cfg.files, quiet: cfg.quiet, mode: "open", banner: true})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	e.doc.Config = cfg.echo(ctx, e.faults())
	e.askServer()
	e.noteConfig()
	// In a cluster every test's keys must be routable: refused up front.
	keys := make([]endpoint.Keys, len(cfg.work.tests))
	for i, j := range cfg.work.tests {
		if keys[i], err = e.target.RouteKeys(ctx, j.Recipe, ""); err != nil {
			return err
		}
	}
	series := experiment.Series{Repeat: cfg.repeat, Conns: cfg.conns, SLO: cfg.slo, Visibility: cfg.load.Visibility,
		Options: report.TestOptions{Percentiles: true, CI: cfg.ci},
		Decide: func(id string) *experiment.Decide {
			return experiment.DecideFor(cfg.decide, report.TestOptions{ID: id}, cfg.slo)
		}}
	for i, j := range cfg.work.tests {
		tl, oc := cfg.Open(cfg.load, cfg.interval, cfg.seed+uint64(i))
		series.Tests = append(series.Tests, experiment.SeriesTest{Test: j.Test, Timeline: tl, Config: oc, Keys: keys[i], Seed: cfg.seed + uint64(i)})
	}
	// The identity heads the first test's output: a run that cannot
	// connect says only that.
	identity := !cfg.quiet
	var end verdict.Ending
	res, err := e.experiment(cfg.showErrs).RunSeries(ctx, series, experiment.SeriesOutput{
		Run: func(res *scheduler.Result) error {
			if cfg.quiet {
				return nil
			}
			// Each run's line; the test's report pools them.
			rt, _, err := verdict.NewTest(res, report.TestOptions{}, cfg.slo)
			if err == nil {
				err = text.Quiet(out, rt, cfg.text)
			}
			return err
		},
		Test: func(t *report.Test, j verdict.Judgement, interrupted bool) error {
			judged(c.App.ErrWriter, &end, t, j)
			e.doc.Tests = append(e.doc.Tests, *t)
			e.doc.Interrupted = e.doc.Interrupted || interrupted
			if err := cfg.files.Checkpoint(e.doc); err != nil {
				return err
			}
			if identity {
				fmt.Fprintf(out, "%s\n\n", text.ServerLine(e.server.ID))
				identity = false
			}
			return text.Report(out, t, cfg.quiet, cfg.ci, cfg.text)
		},
	})
	switch {
	case err != nil && usage.Is(err):
		return err
	case err != nil:
		return failed(err)
	}
	end.Err = res.Err
	e.doc.Interrupted = e.doc.Interrupted || res.Interrupted || ctx.Err() != nil
	if err := e.writeFiles(); err != nil {
		return failed(err)
	}
	if !cfg.quiet && len(e.doc.Tests) > 0 {
		printSeed(out, cfg.seed)
	}
	return e.exit(&end)
}
