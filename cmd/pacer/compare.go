package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/compare"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

func compareCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.StringFlag{Name: "rate", Usage: "open loop at `RATE` req/s (default: 50%, 80% and 95% of the closed loop's throughput)", Category: catLoad},
		&cli.DurationFlag{Name: "duration", Value: 5 * time.Second, Usage: "`DURATION` of each run", Category: catLoad},
		connsFlag(50),
		arrivalFlag(),
		seedFlag("seeds random keys, arrivals and faults"),
		maxBufferFlag(),
		drainFlag(),
		timeoutFlag(),
	)
	flags = append(flags, shardFlags()...)
	flags = append(flags, workloadFlags(workloadSpec{
		tests:    "get",
		testsUse: "the redis-benchmark `TEST` to run (one)",
		dataUse:  "value `SIZE` in bytes: 32, 32-1024 or 64:8,4096:2 (at most 512 MiB)",
		keysUse:  "random keys below `N`",
		pipeline: 1,
		pipeUse:  "closed loop: pipeline `NUMREQ` requests per batch",
	})...)
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "no progress lines",
		jsonUse:   "write every run as pacer.result/v1 to `FILE` (- for stdout)",
		errorsUse: "print error replies on stderr, at most one per second",
		sloUse:    "`CLAUSES` every open-loop run must meet, e.g. p99<5ms,errors<0.1%; a miss exits 3",
		latency:   true,
	})...)
	flags = append(flags, openTailFlags("", false)...)
	return withHelp(&cli.Command{
		Name:      "compare",
		Usage:     "run the same workload closed-loop and open-loop and show what the closed loop hides",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     flags,
		Action:    compareAction,
	},
		"pacer compare --embedded --stall 100ms --every 1s",
		"pacer compare -h HOST -t set -d 100 --rate 20k --duration 30s --json compare.json",
	)
}

// compareConfig is a validated `pacer compare`: the comparison's own
// settings (compare.Config: the action adds the test and the keys) and
// what the environment needs.
type compareConfig struct {
	compare.Config
	// destination: a shard's open runs send its part of the timeline, its
	// closed run its share of -c (ClosedConns), each run from its planned
	// start; with --cluster the closed loop spreads -c over the primaries
	// as bench --cluster does, the open loop opens ceil(c/N) to each.
	destination
	output outputConfig
	work   *workload
	test   workTest
}

func parseCompareConfig(c *cli.Context) (*compareConfig, error) {
	cfg := &compareConfig{}
	var err error
	if cfg.destination, err = parseDestination(c); err != nil {
		return nil, err
	}
	if cfg.Conns, err = parseConns(c); err != nil {
		return nil, err
	}
	cfg.ClosedConns = cfg.Conns
	if cfg.shard.Sharded() {
		if cfg.ClosedConns, err = compare.ShardClients(cfg.Conns, cfg.shard.K, cfg.shard.N, c.IsSet("rate")); err != nil {
			return nil, err
		}
	}
	if cfg.Pipeline, err = parsePipeline(c); err != nil {
		return nil, err
	}
	if cfg.Duration = c.Duration("duration"); cfg.Duration <= 0 {
		return nil, usageErrorf("--duration %s: want a positive duration", cfg.Duration)
	}
	if c.IsSet("rate") {
		if cfg.Rate, err = timeline.ParseRate(c.String("rate")); err != nil {
			return nil, usageErrorf("--rate: %v", err)
		}
	}
	cfg.Seed = parseSeed(c)
	if cfg.output, err = parseOutput(c); err != nil {
		return nil, err
	}
	cfg.SLO, cfg.Interval = cfg.output.slo, cfg.output.interval
	l, err := parseOpenLoad(c, cfg.Conns, cfg.output.slo)
	if err != nil {
		return nil, err
	}
	cfg.Arrival, cfg.Pacing, cfg.Drain, cfg.Timeout, cfg.target.MaxBuffer = l.Arrival, l.Pacing, l.Drain, l.Timeout, l.MaxBuffer
	cfg.LagLimit = experiment.SLOLagLimit(cfg.Pacing, cfg.SLO)
	if cfg.work, err = parseOpenWorkload(c, "a catalogue test"); err != nil {
		return nil, err
	}
	if len(cfg.work.tests) != 1 {
		return nil, usageErrorf("-t %q selects %d tests; compare runs one (or a --mix)", c.String("t"), len(cfg.work.tests))
	}
	if err := experiment.CheckMaxBuffer(cfg.work.list(), cfg.target.MaxBuffer); err != nil {
		return nil, err
	}
	if err := fitMemory(c, cfg.Conns, &l, cfg.work); err != nil {
		return nil, err
	}
	cfg.target.MaxBuffer = l.MaxBuffer
	if err := experiment.CheckClosedBudget(cfg.work.list(), cfg.Conns, cfg.Pipeline); err != nil {
		return nil, err
	}
	cfg.test = cfg.work.tests[0]
	return cfg, nil
}

func compareAction(c *cli.Context) error {
	cfg, err := parseCompareConfig(c)
	if err != nil {
		return err
	}
	e, err := openEnv(c, envConfig{target: cfg.newTarget(), place: cfg.shard,
		files: cfg.output.files, quiet: cfg.output.quiet, mode: "mixed"})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	where := cfg.target.Addr
	if e.embedded != nil {
		where = fmt.Sprintf("embedded target (%s)", e.embedded.Faults())
	}
	// The closed loop sends each connection's requests to one primary,
	// so every key needs redis-benchmark's {tag} (the catalogue's have
	// it).
	keys, err := e.target.RouteKeys(ctx, cfg.test.Recipe, "compare --cluster")
	if err != nil {
		return err
	}
	e.askServer()
	e.noteConfig()
	fmt.Fprintf(out, "pacer compare: %s, %d connections, closed-loop pipeline %d, %s per run, %s\n",
		oneLine(cfg.test.Title), cfg.Conns, cfg.Pipeline, cfg.Duration, oneLine(where))
	if e.server.ID.Available {
		fmt.Fprintln(out, text.ServerLine(e.server.ID))
	}
	fmt.Fprintln(out)
	e.doc.Config = cfg.echo(ctx, e.faults())
	cc := cfg.Config
	cc.Test, cc.Keys = cfg.test.Test, keys
	runs, runErr := compare.Measure(ctx, e.experiment(cfg.output.showErrs), cc)
	for _, r := range runs {
		e.doc.Tests = append(e.doc.Tests, *r.Test)
	}
	e.doc.Interrupted = ctx.Err() != nil
	// Results reach the file before anything reaches stdout.
	if err := e.writeFiles(); err != nil {
		return failed(err)
	}
	if len(runs) > 0 {
		if err := compare.Write(out, runs, cfg.output.text.Percentiles); err != nil {
			return failed(err)
		}
	}
	if err := compare.WriteSLOs(out, runs); err != nil {
		return failed(err)
	}
	if len(runs) > 0 {
		printSeed(out, cfg.Seed)
	}
	end := verdict.Ending{Err: runErr}
	if runErr != nil || ctx.Err() != nil {
		return e.exit(&end) // no verdicts: the runs were cut short
	}
	for _, r := range runs {
		judged(e.stderr, &end, r.Test, r.Judgement)
	}
	return e.exit(&end)
}

func (cfg *compareConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{"arrival": cfg.Arrival, "max_buffer": cfg.target.MaxBuffer, "pacing": cfg.Pacing.String(), "test": cfg.test.Title}
	return echoWork(ctx, report.RunConfig{Target: cfg.target.Addr, Embedded: faults, Conns: cfg.Conns, Pipeline: cfg.Pipeline,
		Dial: cfg.target, Seed: cfg.Seed, Rate: cfg.Rate, Duration: cfg.Duration}, cfg.work, extra)
}
