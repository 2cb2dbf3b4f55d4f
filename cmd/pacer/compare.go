package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/compare"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/target"
)

// compareFractions are the open-loop rates tried without --rate, as
// fractions of the throughput the closed loop reached.
var compareFractions = []float64{0.5, 0.8, 0.95}

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
	flags = append(flags, append([]cli.Flag{pacingFlag()}, measureFlags()...)...)
	flags = append(append(flags, embeddedFlags()...), clusterFlags()...)
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

type compareConfig struct {
	target   conn.Options
	conns    int
	pipeline int
	duration time.Duration
	rate     scheduler.Rate
	arrival  string
	pacing   scheduler.Pacing
	drain    time.Duration
	seed     uint64
	timeout  time.Duration
	output   outputConfig
	work     *workload
	test     workTest
	title    string
	quiet    bool
	jsonPath string
	// shard is --shard, --start-at and --start-in: the open runs send the
	// shard's part of the timeline, the closed run its share of -c
	// (closedConns), each run from its planned start.
	shard       *scheduler.Placement
	closedConns int
	// cluster is --cluster: the closed loop spreads -c over the primaries
	// as bench --cluster does, the open loop opens ceil(c/N) to each.
	cluster bool
}

func parseCompareConfig(c *cli.Context) (*compareConfig, error) {
	cfg := &compareConfig{}
	var err error
	if cfg.target, err = targetOptions(c); err != nil {
		return nil, err
	}
	if cfg.shard, err = parseShard(c, os.LookupEnv, time.Now()); err != nil {
		return nil, err
	}
	if cfg.conns, err = parseConns(c); err != nil {
		return nil, err
	}
	cfg.closedConns = cfg.conns
	if cfg.shard.Sharded() {
		if !c.IsSet("rate") {
			return nil, usageErrorf("--shard needs --rate: without it each shard would take its open rates from its own closed loop's throughput, and the shards would send different timelines")
		}
		// The closed loop has no timeline to share: its load is its
		// clients, so the shards split -c (shard K takes every N-th).
		if cfg.closedConns = compare.ShareOf(cfg.conns, cfg.shard.K, cfg.shard.N); cfg.closedConns == 0 {
			return nil, usageErrorf("--shard %d/%d: -c %d leaves this shard no closed-loop client; give at least -c %d", cfg.shard.K, cfg.shard.N, cfg.conns, cfg.shard.N)
		}
	}
	if cfg.pipeline, err = parsePipeline(c); err != nil {
		return nil, err
	}
	if cfg.duration = c.Duration("duration"); cfg.duration <= 0 {
		return nil, usageErrorf("--duration %s: want a positive duration", cfg.duration)
	}
	if c.IsSet("rate") {
		if cfg.rate, err = scheduler.ParseRate(c.String("rate")); err != nil {
			return nil, usageErrorf("--rate: %v", err)
		}
	}
	cfg.seed = parseSeed(c)
	if cfg.output, err = parseOutput(c); err != nil {
		return nil, err
	}
	cfg.quiet, cfg.jsonPath = cfg.output.quiet, cfg.output.jsonPath
	l, err := parseOpenLoad(c, cfg.conns, cfg.output.slo)
	if err != nil {
		return nil, err
	}
	cfg.arrival, cfg.pacing, cfg.drain, cfg.timeout, cfg.target.MaxBuffer = l.Arrival, l.Pacing, l.Drain, l.Timeout, l.MaxBuffer
	sizes, err := parseSizes(c, false)
	if err != nil {
		return nil, err
	}
	if c.IsSet("t") && c.Args().Len() > 0 {
		return nil, usageErrorf("-t selects a catalogue test; it cannot be combined with a custom command")
	}
	if cfg.work, err = parseWorkload(c, sizes, c.Args().Slice(), false); err != nil {
		return nil, err
	}
	if len(cfg.work.tests) != 1 {
		return nil, usageErrorf("-t %q selects %d tests; compare runs one (or a --mix)", c.String("t"), len(cfg.work.tests))
	}
	if err := checkMaxBuffer(cfg.work, cfg.target.MaxBuffer); err != nil {
		return nil, err
	}
	if err := checkClosedBudget(cfg.work, cfg.conns, cfg.pipeline); err != nil {
		return nil, err
	}
	cfg.test = cfg.work.tests[0]
	cfg.title = cfg.test.title
	if cfg.cluster = c.Bool("cluster"); cfg.cluster && c.Bool("embedded") {
		return nil, usageErrorf("--cluster needs a Redis Cluster: --embedded is a single server")
	}
	return cfg, nil
}

func compareAction(c *cli.Context) error {
	cfg, err := parseCompareConfig(c)
	if err != nil {
		return err
	}
	e, err := openEnv(c, envConfig{target: &target.Target{Options: cfg.target, Cluster: cfg.cluster}, place: cfg.shard,
		files: cfg.output.files, quiet: cfg.quiet, mode: "mixed"})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	where := cfg.target.Addr
	if e.embedded != nil {
		where = fmt.Sprintf("embedded target (%s)", e.embedded.Faults())
	}
	var keys target.Keys
	if cfg.cluster {
		// The closed loop sends each connection's requests to one primary,
		// so every key needs redis-benchmark's {tag} (the catalogue's have
		// it).
		if keys, err = target.ClusterKeys(ctx, e.target.Options, cfg.test.recipe); err != nil {
			return err
		}
		if err := keys.NeedTags(cfg.test.recipe, "compare --cluster"); err != nil {
			return err
		}
	}
	e.askServer()
	e.noteConfig()
	fmt.Fprintf(out, "pacer compare: %s, %d connections, closed-loop pipeline %d, %s per run, %s\n",
		cfg.title, cfg.conns, cfg.pipeline, cfg.duration, where)
	if e.server.ID.Available {
		fmt.Fprintln(out, report.ServerLine(e.server.ID))
	}
	fmt.Fprintln(out)
	e.doc.Config = cfg.echo(ctx, e.faults())
	runs, runErr := compare.Measure(ctx, e.experiment(cfg.output.showErrs), compare.Config{
		Test: cfg.work.testOf(cfg.test), Rate: cfg.rate, Duration: cfg.duration, Conns: cfg.conns, ClosedConns: cfg.closedConns,
		Pipeline: cfg.pipeline, Arrival: cfg.arrival, Pacing: cfg.pacing, LagLimit: experiment.SLOLagLimit(cfg.pacing, cfg.output.slo),
		Drain: cfg.drain, Timeout: cfg.timeout, Interval: cfg.output.interval, Seed: cfg.seed, SLO: cfg.output.slo, Keys: keys,
	})
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
	for _, r := range runs {
		if r.Test.SLO != nil {
			for _, l := range r.Test.SLO.Lines() {
				fmt.Fprintf(out, "%s: %s\n", r.Test.Name, l)
			}
		}
	}
	if len(runs) > 0 {
		printSeed(out, cfg.seed)
	}
	switch {
	case runErr != nil:
		return runErr
	case ctx.Err() != nil:
		return exitCode(exitInterrupted)
	}
	code := exitOK
	for _, r := range runs {
		code = worst(code, judged(e.stderr, r.Test, r.Judgement))
	}
	if code != exitOK {
		return exitCode(code)
	}
	return nil
}

func (cfg *compareConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{"arrival": cfg.arrival, "max_buffer": cfg.target.MaxBuffer, "pacing": cfg.pacing.String(), "test": cfg.title}
	if cfg.work.mixed || cfg.test.custom {
		extra["command"] = cfg.title
	}
	return echoConfig(ctx, report.RunConfig{
		Target: cfg.target.Addr, Embedded: faults, Conns: cfg.conns, Pipeline: cfg.pipeline, Dial: cfg.target,
		Sizes: cfg.work.opts.Sizes, Keyspace: cfg.work.opts.Keyspace, KeyDist: cfg.work.keys,
		Seed: cfg.seed, Tests: testIDs(cfg.work), Rate: cfg.rate, Duration: cfg.duration,
	}, extra)
}
