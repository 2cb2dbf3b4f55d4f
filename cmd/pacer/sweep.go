package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/sweep"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/verdict"
)

func sweepCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.StringFlag{Name: "rates", Usage: "open sweep: the target `RATES`, comma-separated: 10k,20k,40k", Category: catLoad},
		&cli.StringFlag{Name: "from", Usage: "open sweep: the first `RATE` (with --to and --step; --search starts there)", DefaultText: "1k with --search", Category: catLoad},
		&cli.StringFlag{Name: "to", Usage: "open sweep: the last `RATE` (--search: the highest it tries)", Category: catLoad},
		&cli.StringFlag{Name: "step", Usage: "open sweep: go from --from to --to by `RATE`", Category: catLoad},
		&cli.DurationFlag{Name: "step-duration", Value: 5 * time.Second, Usage: "measure each step (closed: each point) for `DURATION`", Category: catLoad},
		&cli.DurationFlag{Name: "settle", Value: time.Second, Usage: "open sweep: send each step's rate for `DURATION` before measuring it (sent, not measured)", Category: catLoad},
		&cli.BoolFlag{Name: "search", Usage: "find the highest rate that meets --slo: grow ×4 from --from until a step fails, then bisect to --precision", Category: catLoad},
		&cli.StringFlag{Name: "precision", Value: "5%", Usage: "--search stops when the failing rate is within `SHARE` above the passing one", Category: catLoad},
		&cli.IntFlag{Name: "max-steps", Value: sweep.DefaultMaxSteps, Usage: "--search measures at most `N` points; one that stops there with a bracket wider than --precision exits 4", Category: catLoad},
		&cli.DurationFlag{Name: "abort-after", Usage: "stop a step (and fail it) once its oldest unanswered request has waited `DURATION` since its intended time; 0: never", DefaultText: "10× the --slo latency bound, at least 100ms; 1s without one", Category: catLoad},
		&cli.BoolFlag{Name: "closed", Usage: "closed sweep: the bench loop at each -c × -P point, with Little's law and the knee", Category: catLoad},
		&cli.StringFlag{Name: "c", Value: "50", Usage: "`N` connections (at most 10000); --closed: a list, 10,50,100,200", Category: catLoad},
		&cli.StringFlag{Name: "P", Value: "1", Usage: "--closed: pipeline `LIST` of batch sizes, 1,16,64", Category: catLoad},
		repeatFlag(),
		decideFlag("--search: a budget `DURATION` for each step to reach a verdict in: a step that is inconclusive because of the client or its host goes on measuring, judged on everything it measured (see pacer run --decide-within); without it, a step that measures a rate again gets three times its length"),
		arrivalFlag(),
		seedFlag("seeds poisson arrivals and random keys (the JSON records it)"),
	)
	flags = append(flags, openLoadFlags("a request more than `DURATION` late when its turn comes is counted unsent instead of sent")...)
	flags = append(flags, topologyFlags()...)
	flags = append(flags, shardFlags()...)
	flags = append(flags, workloadFlags(workloadSpec{
		tests:    "get",
		testsUse: "the one catalogue `TEST` to sweep (get, set, incr, ...)",
		dataUse:  "value `SIZE` in bytes: 32, a range 32-1024, or weighted 64:8,4096:2 (at most 512 MiB)",
		keysUse:  "random keys: __rand_int__ and __key__ become 12-digit numbers below `N`",
	})...)
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "quiet: only the step table and the result",
		jsonUse:   "write the pacer.result/v1 JSON to `FILE` (- for stdout): a test per step, and the sweep",
		errorsUse: "print error replies on stderr, at most one per second",
		sloUse:    "`CLAUSES` a step must meet, e.g. p99<=1ms,errors<0.1%; required by --search",
	})...)
	flags = append(flags, openTailFlags("a step is inconclusive (verdict generator_behind); with --pacing auto it sets the wake quantum", true)...)
	return withHelp(&cli.Command{
		Name:      "sweep",
		Usage:     "step the load: open rates (or --search the highest that meets --slo), or closed -c × -P points",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     flags,
		Action:    sweepAction,
	},
		"pacer sweep --embedded --delay exp:100us --search --slo 'p99<=1ms' --step-duration 1s --settle 250ms",
		"pacer sweep -h HOST --closed -c 1,5,10,50,200 --step-duration 5s -t get",
	)
}

// sweepConfig is a validated `pacer sweep`: the sweep's own settings
// (sweep.Config: the action adds the test, the keys and the printer) and
// what the environment needs.
type sweepConfig struct {
	sweep.Config
	// destination: a shard (open sweeps of listed rates only) sends its
	// part of each step's timeline, each step from its planned instant;
	// with --cluster an open sweep opens conns to each primary and routes
	// by slot, a closed sweep runs bench --cluster's loop at each point.
	destination
	closed   bool
	load     experiment.OpenLoad // an open sweep's
	showErrs bool
	files    resultFiles
	work     *workload
}

func parseSweepConfig(c *cli.Context) (*sweepConfig, error) {
	cfg := &sweepConfig{closed: c.Bool("closed")}
	cfg.Search, cfg.StepDuration, cfg.Settle, cfg.CI = c.Bool("search"), c.Duration("step-duration"), c.Duration("settle"), c.Bool("ci")
	var err error
	if cfg.destination, err = parseDestination(c); err != nil {
		return nil, err
	}
	if cfg.Repeat, err = parseRepeat(c); err != nil {
		return nil, err
	}
	out, err := parseOutput(c)
	if err != nil {
		return nil, err
	}
	cfg.showErrs, cfg.SLO, cfg.Quiet, cfg.files, cfg.Interval = out.showErrs, out.slo, out.quiet, out.files, out.interval
	cfg.Seed = parseSeed(c)
	switch placed := c.IsSet("shard") || c.IsSet("start-at") || c.IsSet("start-in"); {
	case placed && cfg.closed:
		// A closed loop has no timeline to share or to start at an instant:
		// its load is its clients, each waiting for its own replies.
		return nil, usageErrorf("--shard, --start-at and --start-in shard an open sweep's timeline; a closed sweep has none: run it from one process, or give each machine its own -c")
	case c.IsSet("shard") && cfg.Search:
		return nil, usageErrorf("--shard cannot search: each shard would choose its next rate from its own part of the measurements; list the rates (--rates, or --from, --to and --step) and merge the shards' steps")
	}
	if cfg.closed {
		err = cfg.SetClosed(c.String("c"), c.String("P"), c.Duration("drain"), c.IsSet, maxConnections)
	} else {
		err = cfg.parseOpen(c)
	}
	if err == nil && c.IsSet("decide-within") {
		var d time.Duration
		switch d, err = parseDecide(c, cfg.SLO, 0); {
		case err != nil:
		case !cfg.Search:
			err = usageErrorf("--decide-within is for --search's steps: a plain sweep measures its listed rates as they come")
		default:
			cfg.Decide = d
		}
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return nil, err
	}
	if cfg.work, err = parseOpenWorkload(c, "a catalogue test"); err != nil {
		return nil, err
	}
	if len(cfg.work.tests) != 1 {
		return nil, usageErrorf("a sweep runs one workload: -t names %d tests; pick one, or make them one test with --mix", len(cfg.work.tests))
	}
	if cfg.closed {
		err = experiment.CheckClosedBudget(cfg.work.list(), slices.Max(cfg.Clients), slices.Max(cfg.Pipelines))
	} else if err = experiment.CheckMaxBuffer(cfg.work.list(), cfg.target.MaxBuffer); err == nil {
		err = fitMemory(c, cfg.Conns, &cfg.load, cfg.work)
		cfg.target.MaxInflight, cfg.target.MaxBuffer = cfg.load.MaxInflight, cfg.load.MaxBuffer
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func (cfg *sweepConfig) parseOpen(c *cli.Context) error {
	if err := cfg.SetConns(c.String("c"), c.IsSet("P"), maxConnections); err != nil {
		return err
	}
	if err := cfg.SetRates(sweep.RateFlags{Rates: given(c, "rates"), From: given(c, "from"), To: given(c, "to"), Step: given(c, "step"),
		Precision: c.String("precision"), MaxSteps: c.Int("max-steps")}); err != nil {
		return err
	}
	var err error
	if cfg.load, err = parseOpenLoad(c, cfg.Conns, cfg.SLO); err != nil {
		return err
	}
	cfg.target.MaxInflight, cfg.target.MaxBuffer = cfg.load.MaxInflight, cfg.load.MaxBuffer
	cfg.Arrival, cfg.Drain, cfg.Open = cfg.load.Arrival, cfg.load.Drain, cfg.load.Open(cfg.Interval)
	cfg.AbortAfter = sweep.DefaultAbortAfter(cfg.SLO)
	if c.IsSet("abort-after") {
		cfg.AbortAfter = c.Duration("abort-after")
	}
	return nil
}

func (cfg *sweepConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := cfg.Echo(cfg.closed)
	rc := report.RunConfig{Target: cfg.target.Addr, Embedded: faults, Seed: cfg.Seed, Duration: cfg.StepDuration}
	if cfg.closed {
		rc.Conns, rc.Pipeline = slices.Max(cfg.Clients), slices.Max(cfg.Pipelines)
	} else {
		rc.Conns = cfg.Conns
		extra["max_inflight"], extra["max_buffer"] = cfg.target.MaxInflight, cfg.target.MaxBuffer
	}
	if cfg.cluster {
		extra["cluster"] = true // an open sweep's connections are per primary
	}
	if !cfg.closed {
		if rf := cfg.Open.ReadFrom; rf != openloop.ReadPrimary {
			extra["read_from"] = rf.String()
		}
		if w := cfg.Open.Wait; w != nil {
			extra["wait"] = map[string]any{"replicas": w.Replicas, "timeout_ms": w.Timeout.Milliseconds()}
		}
	}
	return echoWork(ctx, rc, cfg.work, extra)
}

func sweepAction(c *cli.Context) error {
	cfg, err := parseSweepConfig(c)
	if err != nil {
		return err
	}
	run, mode := sweep.Open, "open"
	if cfg.closed {
		run, mode = sweep.Closed, "closed"
	}
	e, err := openEnv(c, envConfig{target: cfg.newTarget(), place: cfg.shard,
		files: cfg.files, quiet: cfg.Quiet, mode: mode, banner: true})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	j := cfg.work.tests[0]
	// Every key must be routable, before anything is sent; a closed
	// sweep sends each connection's requests to one primary, as bench
	// --cluster does, so its keys need {tag}.
	closedLoop := ""
	if cfg.closed {
		closedLoop = "sweep --closed --cluster"
	}
	keys, err := e.target.RouteKeys(ctx, j.Recipe, closedLoop)
	if err != nil {
		return err
	}
	e.doc.Config = cfg.echo(ctx, e.faults())
	e.askServer()
	e.noteConfig()
	if !cfg.Quiet && e.server.ID.Available {
		fmt.Fprintf(out, "%s\n\n", text.ServerLine(e.server.ID))
	}
	sc := cfg.Config
	sc.Test, sc.Keys = j.Test, keys
	if !cfg.Quiet {
		sc.Print = func(s string) { io.WriteString(out, s) }
	}
	res, err := run(ctx, e.experiment(cfg.showErrs), sc)
	end := verdict.Ending{Err: err}
	if res != nil {
		e.doc.Tests = append(e.doc.Tests, res.Tests...)
		e.doc.Sweep = res.Sweep
		e.doc.Interrupted = res.Interrupted
		io.WriteString(out, res.Text)
		for _, n := range res.Notes {
			fmt.Fprintln(e.stderr, n)
		}
		end.Add(res.Outcome)
		if !res.Interrupted {
			e.doc.Outcome = res.Outcome.String()
			if e.doc.Sweep != nil {
				e.doc.Sweep.Outcome = e.doc.Outcome
			}
		}
	}
	if werr := e.writeFiles(); werr != nil {
		return failed(werr)
	}
	if !cfg.Quiet && len(e.doc.Tests) > 0 {
		printSeed(out, cfg.Seed)
	}
	return e.exit(&end)
}
