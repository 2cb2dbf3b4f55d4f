package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

func runCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.StringFlag{Name: "rate", Usage: "target `RATE` in requests per second: 2500, 10k, 1.5M, 0.5 (required)", Category: catLoad},
		&cli.DurationFlag{Name: "duration", Value: 10 * time.Second, Usage: "`DURATION` of each test's timeline", Category: catLoad},
		&cli.Int64Flag{Name: "n", Usage: "`N` requests per test (instead of --duration; with both, whichever ends first)", DefaultText: "none", Category: catLoad},
		connsFlag(50),
		arrivalFlag(),
		seedFlag("seeds poisson arrivals and random keys (the JSON records it)"),
		pacingFlag(),
		maxInflightFlag(),
		maxBufferFlag(),
		drainFlag(),
		timeoutFlag(),
		&cli.DurationFlag{Name: "max-backlog", Value: scheduler.DefaultMaxBacklog, Usage: "a request more than `DURATION` late when its turn comes (no connection, or all full) is counted unsent instead of sent", Category: catLoad},
		&cli.DurationFlag{Name: "lag-limit", Usage: "send-lag p99 `DURATION` above which the verdict is generator_behind", DefaultText: "1ms precise, 2ms coarse", Category: catLoad},
		repeatFlag(),
	)
	flags = append(flags, workloadFlags(workloadSpec{
		testsUse: "only run the comma-separated `TESTS` (redis-benchmark names: ping,set,get,incr,...; default the whole suite)",
		dataUse:  "value `SIZE` in bytes: 32, a range 32-1024, or weighted 64:8,4096:2 (at most 512 MiB)",
		keysUse:  "random keys: __rand_int__ and __key__ become 12-digit numbers below `N`",
	})...)
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "quiet: one line per test, no progress",
		jsonUse:   "write the pacer.result/v1 JSON to `FILE` (- for stdout)",
		errorsUse: "print error replies on stderr, at most one per second",
		sloUse:    "`CLAUSES` every test must meet, e.g. p99<5ms,p99.9<20ms,errors<0.1%; a miss exits 3",
	})...)
	flags = append(flags, ciFlag())
	flags = append(append(flags, embeddedFlags()...), unsupportedFlags()...)
	return withHelp(&cli.Command{
		Name:      "run",
		Usage:     "open model: send on a fixed-rate timeline, measure latency from the intended send time",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     flags,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Action: runAction,
	},
		"pacer run --embedded --rate 5k --duration 5s -t get,set -r 1000",
		"pacer run -h 10.0.0.5 --rate 20k --duration 30s -t get -r 100000 --slo 'p99<2ms,errors<0.1%' --json run.json",
	)
}

// runConfig is everything `pacer run` was asked to do, validated.
type runConfig struct {
	target   conn.Options
	conns    int
	rate     scheduler.Rate
	duration time.Duration
	requests uint64
	arrival  string
	seed     uint64
	pacing   scheduler.Pacing
	drain    time.Duration
	lagLimit time.Duration
	timeout  time.Duration
	interval time.Duration
	backlog  time.Duration
	showErrs bool
	slo      report.SLO
	work     *workload
	quiet    bool
	jsonPath string
	repeat   int
	ci       bool
}

func parseRunConfig(c *cli.Context) (*runConfig, error) {
	cfg := &runConfig{}
	var err error
	if cfg.target, err = target(c); err != nil {
		return nil, err
	}
	if !c.IsSet("rate") {
		return nil, usageErrorf("--rate is required (for example --rate 10k)")
	}
	if cfg.rate, err = scheduler.ParseRate(c.String("rate")); err != nil {
		return nil, usageErrorf("--rate: %v", err)
	}
	cfg.duration = c.Duration("duration")
	if n := c.Int64("n"); c.IsSet("n") {
		if n <= 0 {
			return nil, usageErrorf("-n %d: want a positive number of requests", n)
		}
		cfg.requests = uint64(n)
		if !c.IsSet("duration") {
			cfg.duration = 0 // -n alone bounds the run
		}
	}
	if c.IsSet("duration") && cfg.duration <= 0 || cfg.requests == 0 && cfg.duration <= 0 {
		return nil, usageErrorf("--duration %s: want a positive duration such as 10s or 2m", c.Duration("duration"))
	}
	if cfg.conns, err = parseConns(c); err != nil {
		return nil, err
	}
	switch cfg.arrival = c.String("arrival"); cfg.arrival {
	case "uniform", "poisson":
	default:
		return nil, usageErrorf("--arrival %q: want uniform or poisson", cfg.arrival)
	}
	cfg.seed = parseSeed(c)
	if k := c.Int("max-inflight"); k < 1 || k > maxInflightPerConn {
		return nil, usageErrorf("--max-inflight %d: want 1 to %d", k, maxInflightPerConn)
	} else {
		cfg.target.MaxInflight = k
	}
	if err := checkInflightBudget(cfg.conns, cfg.target.MaxInflight); err != nil {
		return nil, err
	}
	if cfg.target.MaxBuffer, err = parseMaxBuffer(c); err != nil {
		return nil, err
	}
	p, ok := scheduler.ParsePacing(c.String("pacing"))
	if !ok {
		return nil, usageErrorf("--pacing %q: want precise or coarse", c.String("pacing"))
	}
	cfg.pacing = p
	if cfg.drain = c.Duration("drain"); cfg.drain < 0 {
		return nil, usageErrorf("--drain %s: must not be negative", cfg.drain)
	}
	if cfg.drain == 0 {
		cfg.drain = time.Nanosecond // zero would mean the default
	}
	if cfg.lagLimit = c.Duration("lag-limit"); c.IsSet("lag-limit") && cfg.lagLimit <= 0 {
		return nil, usageErrorf("--lag-limit %s: want a positive duration", cfg.lagLimit)
	}
	if cfg.timeout = c.Duration("timeout"); cfg.timeout < 0 || (c.IsSet("timeout") && cfg.timeout == 0) {
		return nil, usageErrorf("--timeout %s: want a positive duration", cfg.timeout)
	}
	if cfg.backlog = c.Duration("max-backlog"); cfg.backlog <= 0 {
		return nil, usageErrorf("--max-backlog %s: want a positive duration", cfg.backlog)
	}
	out, err := parseOutput(c)
	if err != nil {
		return nil, err
	}
	cfg.showErrs, cfg.slo, cfg.quiet, cfg.jsonPath, cfg.interval = out.showErrs, out.slo, out.quiet, out.jsonPath, out.interval
	if cfg.repeat, err = parseRepeat(c); err != nil {
		return nil, err
	}
	cfg.ci = c.Bool("ci")
	sizes, err := parseSizes(c, false)
	if err != nil {
		return nil, err
	}
	if c.IsSet("t") && c.Args().Len() > 0 {
		return nil, usageErrorf("-t selects catalogue tests; it cannot be combined with a custom command")
	}
	if cfg.work, err = parseWorkload(c, sizes, c.Args().Slice(), false); err != nil {
		return nil, err
	}
	if err := checkMaxBuffer(cfg.work, cfg.target.MaxBuffer); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (cfg *runConfig) timeline(i int) scheduler.Timeline {
	if cfg.arrival == "poisson" {
		return scheduler.NewPoisson(cfg.rate, cfg.seed+uint64(i))
	}
	return scheduler.Uniform{Rate: cfg.rate}
}

func (cfg *runConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{
		"arrival":      cfg.arrival,
		"pacing":       cfg.pacing.String(),
		"max_inflight": cfg.target.MaxInflight,
		"max_buffer":   cfg.target.MaxBuffer,
		"drain_s":      cfg.drain.Seconds(),
	}
	if len(cfg.work.tests) == 1 && (cfg.work.tests[0].custom || cfg.work.mixed) {
		extra["command"] = cfg.work.tests[0].title
	}
	return commonConfig{
		target: cfg.target.Addr, embedded: faults, conns: cfg.conns,
		sizes: cfg.work.opts.Sizes, keyspace: cfg.work.opts.Keyspace, keyDist: cfg.work.keys,
		seed: cfg.seed, tests: testIDs(cfg.work),
		rate: cfg.rate, duration: cfg.duration, requests: cfg.requests,
	}.echo(ctx, extra)
}

func runAction(c *cli.Context) error {
	cfg, err := parseRunConfig(c)
	if err != nil {
		return err
	}
	mx, err := startMetrics(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer mx.close()
	srv, stopEmbedded, err := startEmbedded(c, &cfg.target, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer stopEmbedded()
	out := c.App.Writer
	if cfg.jsonPath == "-" {
		out = c.App.ErrWriter // stdout carries the JSON
	}
	doc := &report.Document{
		Schema:    report.Schema,
		Mode:      "open",
		Tool:      report.Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339),
		Config:    cfg.echo(c.Context, faultsOf(srv)),
		Tests:     []report.Test{},
	}
	ctx := c.Context
	code := exitOK
	var runErr error
	for i, j := range cfg.work.tests {
		stream, err := cfg.work.stream(j, cfg.seed+uint64(i))
		if err != nil {
			return usageErrorf("%v", err)
		}
		var runs []*scheduler.Result
		for k := 0; k < cfg.repeat; k++ {
			res, err := cfg.runOnce(c, mx, j, runName(j.title, k, cfg.repeat), i, stream)
			if res != nil {
				redactResult(ctx, res)
				runs = append(runs, res)
				if cfg.repeat > 1 && !cfg.quiet {
					if werr := report.Quiet(out, res, cfg.slo.Check(res)); werr != nil {
						return failed(werr)
					}
				}
			}
			if err != nil {
				runErr = err
			}
			if err != nil || res.Interrupted || ctx.Err() != nil {
				break
			}
		}
		if len(runs) > 0 {
			res := pool(runs)
			res.Name = j.title
			sloRes := cfg.slo.Check(res)
			t, jerr := testJSON(res, cfg.ci)
			if jerr != nil {
				return failed(jerr)
			}
			t.ID, t.SLO = j.id(), sloRes
			var reps *report.Repeats
			if cfg.repeat > 1 {
				if reps, jerr = repeatsOf(runs, j.id(), cfg.ci); jerr != nil {
					return failed(jerr)
				}
				t.Repeats = reps
			}
			doc.Tests = append(doc.Tests, t)
			doc.Interrupted = res.Interrupted || ctx.Err() != nil
			if err := checkpointJSON(cfg.jsonPath, doc); err != nil {
				return failed(err)
			}
			if werr := render(out, res, cfg.quiet, sloRes); werr != nil {
				return failed(werr)
			}
			if !cfg.quiet {
				if werr := writeNotes(out, res, cfg.ci, reps); werr != nil {
					return failed(werr)
				}
			}
			code = worst(code, judge(c.App.ErrWriter, res))
			if sloRes != nil && !sloRes.Pass {
				code = worst(code, exitSLO)
			}
			if res.Interrupted {
				doc.Interrupted = true
			}
		}
		if runErr != nil {
			break
		}
		if doc.Interrupted || ctx.Err() != nil {
			doc.Interrupted = true
			break
		}
	}
	if cfg.jsonPath != "" {
		if err := writeJSON(c.App.Writer, cfg.jsonPath, doc); err != nil {
			return failed(err)
		}
	}
	if !cfg.quiet && len(doc.Tests) > 0 {
		printSeed(out, cfg.seed)
	}
	switch {
	case doc.Interrupted || ctx.Err() != nil:
		if runErr != nil {
			fmt.Fprintf(c.App.ErrWriter, "pacer: %s\n", oneLine(runErr.Error()))
		}
		return exitCode(exitInterrupted)
	case runErr != nil:
		return failed(runErr)
	case code != exitOK:
		return exitCode(code)
	}
	return nil
}

// runOnce dials and runs test j once, named name.
func (cfg *runConfig) runOnce(c *cli.Context, mx *liveMetrics, j workTest, name string, i int, stream scheduler.Commands) (*scheduler.Result, error) {
	conns, err := dialPool(c.Context, cfg.target, cfg.conns, c.App.ErrWriter)
	if err != nil {
		return nil, err
	}
	liveCh := make(chan *scheduler.Live, 1)
	stopProgress := func() {}
	if !cfg.quiet {
		stopProgress = newProgress(c.App.ErrWriter).watch(name, liveCh)
	}
	onStart, endMetrics := mx.hook(j.title, metrics.ModeOpen, func(l *scheduler.Live) { liveCh <- l })
	res, err := scheduler.RunOpen(c.Context, conns, stream, scheduler.OpenConfig{
		OnStart:      onStart,
		CommandNames: j.names,
		Name:         name,
		Timeline:     cfg.timeline(i),
		Rate:         cfg.rate,
		Duration:     cfg.duration,
		Requests:     cfg.requests,
		Pacing:       cfg.pacing,
		Drain:        cfg.drain,
		LagLimit:     cfg.lagLimit,
		Timeout:      cfg.timeout,
		Interval:     cfg.interval,
		MaxBacklog:   cfg.backlog,
		Redial: func(ctx context.Context) (*conn.Conn, error) {
			return conn.Dial(ctx, cfg.target)
		},
		OnErrorReply: errorsTo(c.App.ErrWriter, cfg.showErrs),
	})
	endMetrics()
	stopProgress()
	return res, err
}

func render(w io.Writer, res *scheduler.Result, quiet bool, slo *report.SLOResult) error {
	if quiet {
		return report.Quiet(w, res, slo)
	}
	return report.Text(w, res, slo)
}
