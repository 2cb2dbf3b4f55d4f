package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/bench"
	"github.com/pacer-load/pacer/internal/input"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/verdict"
)

// benchCommand is `pacer bench`: redis-benchmark's closed loop with its
// flags, defaults, tests and output formats.
func benchCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.IntFlag{Name: "n", Value: 100000, Usage: "`N`: total number of requests per test", Category: catLoad},
		connsFlag(50),
		&cli.IntFlag{Name: "k", Value: 1, Usage: "keep alive `1|0`: 0 reconnects after every batch", Category: catLoad},
		&cli.BoolFlag{Name: "l", Usage: "loop: run the tests forever (--json keeps one entry per test)", Category: catLoad},
		&cli.BoolFlag{Name: "I", Usage: "idle mode: just open -c idle connections and wait", Category: catLoad},
		&cli.IntFlag{Name: "threads", Usage: "multi-thread mode with `N` threads (GOMAXPROCS; default one thread)", Category: catLoad},
		&cli.StringFlag{Name: "rate", Usage: "throttle the closed loop to `RATE` requests per second (memtier's --rate-limiting); latency still counts from the actual send", Category: catLoad},
		&cli.StringFlag{Name: "latency", Value: "first-reply", Usage: "`MODE`: first-reply (redis-benchmark: a batch's first reply, recorded for each of its replies) or per-reply", Category: catLoad},
		seedFlag("seeds the random keys"),
		repeatFlag(),
	)
	flags = append(flags, workloadFlags(workloadSpec{
		testsUse: "only run the comma-separated list of `TESTS` (default the whole suite: all)",
		dataUse:  "data `SIZE` of SET/GET values in bytes (pacer also takes 32-1024 and 64:8,4096:2; at most 512 MiB)",
		keysUse:  "use random keys: __rand_int__ becomes a 12-digit number below `KEYSPACELEN`",
		pipeline: 1,
		pipeUse:  "pipeline `NUMREQ` requests per batch",
	})...)
	flags = append(flags, &cli.BoolFlag{Name: "x", Usage: "read the last argument from stdin (at most 512 MiB)", Category: catWorkload})
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "quiet: just show query/sec values",
		jsonUse:   "write the pacer.result/v1 JSON to `FILE` (- for stdout)",
		errorsUse: "show server errors (at most one per second) and keep going, instead of exiting on the first",
		sloUse:    "`CLAUSES` every test must meet, e.g. p99<5ms,errors<0.1%; verdicts on stderr, a miss exits 3",
		latency:   true,
	})...)
	flags = append(flags, measureFlags()...)
	flags = append(flags,
		&cli.BoolFlag{Name: "csv", Usage: "output in CSV format", Category: catOutput},
		&cli.IntFlag{Name: "precision", Value: 3, Usage: "`DIGITS`: significant digits of the latency histogram (1 to 4)", Category: catOutput},
		ciFlag(),
	)
	flags = append(append(flags, embeddedFlags()...), clusterFlags()...)
	return withHelp(&cli.Command{
		Name:      "bench",
		Usage:     "closed loop: a drop-in for redis-benchmark (same flags, tests and output)",
		ArgsUsage: "[COMMAND ARGS...]",
		Flags:     flags,
		Action:    benchAction,
	},
		"pacer bench --embedded -t set,get -n 100000 -P 16 -q",
		"pacer bench -h HOST -t get -c 50 -n 1000000 --csv",
	)
}

// benchConfig is a validated `pacer bench` invocation: the bench's own
// settings (bench.Config: the action adds the tests, the header and the
// primaries) and what the environment needs.
type benchConfig struct {
	bench.Config
	destination // no shard: bench has no timeline to share
	sizes       scenarios.Sizes
	keepAlive   int
	work        *workload
	idle        bool
	seed        uint64
	threads     int
	files       resultFiles
	warnings    []string
}

func parseBenchConfig(c *cli.Context, stdin io.Reader) (*benchConfig, error) {
	cfg := &benchConfig{}
	var err error
	if cfg.target, cfg.sentinels, err = targetOptions(c); err != nil {
		return nil, err
	}
	if cfg.Clients, err = parseConns(c); err != nil {
		return nil, err
	}
	repeat, err := parseRepeat(c)
	if err != nil {
		return nil, err
	}
	f := bench.Flags{Requests: c.Int("n"), Pipeline: c.Int("P"), KeepAlive: c.Int("k"), Precision: c.Int("precision"),
		Threads: c.Int("threads"), Repeat: repeat, Latency: c.String("latency"),
		Loop: c.Bool("l"), Idle: c.Bool("I"), Cluster: c.Bool("cluster"), Embedded: c.Bool("embedded"), Rate: given(c, "rate")}
	s, err := f.Parse(&cfg.Config)
	if err != nil {
		return nil, err
	}
	cfg.keepAlive, cfg.threads, cfg.warnings, cfg.idle, cfg.cluster = s.KeepAlive, s.Threads, s.Warnings, f.Idle, f.Cluster
	// redis-benchmark clamps -d to at least 1 byte.
	if cfg.sizes, err = parseSizes(c, true); err != nil {
		return nil, err
	}
	if c.IsSet("r") {
		if n, err := strconv.ParseInt(c.String("r"), 10, 64); err == nil && n < 0 {
			if err := c.Set("r", "0"); err != nil { // redis-benchmark: negative means 0
				return nil, failed(err)
			}
		}
	}
	cfg.CSV = c.Bool("csv")
	cfg.Seed = parseSeed(c)
	out, err := parseOutput(c)
	if err != nil {
		return nil, err
	}
	cfg.Quiet, cfg.ContinueOnError, cfg.SLO, cfg.Interval = out.quiet, out.showErrs, out.slo, out.interval
	cfg.files, cfg.Text = out.files, out.text
	cfg.CI = c.Bool("ci")
	trailing := c.Args().Slice()
	if c.Bool("x") {
		if len(trailing) == 0 {
			return nil, usageErrorf("-x reads the last argument from stdin: give a command")
		}
		last, err := bench.ReadLastArg(input.Reader(c.Context, stdin), cfg.Clients, cfg.Pipeline, experiment.MaxClosedInFlight)
		if err != nil {
			return nil, err
		}
		trailing = append(trailing, last)
	}
	ignoreT := len(trailing) > 0 && c.IsSet("t")
	if ignoreT {
		cfg.warnings = append(cfg.warnings, "WARNING: Option -t is ignored.")
	}
	if cfg.work, err = parseWorkload(c, cfg.sizes, trailing, ignoreT); err != nil {
		return nil, err
	}
	if err := experiment.CheckClosedBudget(cfg.work.list(), cfg.Clients, cfg.Pipeline); err != nil {
		return nil, err
	}
	if cfg.keepAlive == 0 {
		cfg.warnings = append(cfg.warnings, bench.KeepAliveWarning)
	}
	return cfg, nil
}

func benchAction(c *cli.Context) error {
	cfg, err := parseBenchConfig(c, c.App.Reader)
	if err != nil {
		return err
	}
	e, err := openEnv(c, envConfig{target: cfg.newTarget(),
		files: cfg.files, quiet: cfg.Quiet || cfg.CSV, mode: "closed", banner: true})
	if err != nil {
		return err // a usage error's one line: the warnings come after
	}
	defer e.close()
	stderr := e.stderr
	for _, w := range cfg.warnings {
		fmt.Fprintln(stderr, w)
	}
	ctx, out := c.Context, e.out
	cfg.Info = peers.BenchInfo{Clients: cfg.Clients, KeepAlive: cfg.keepAlive, Threads: cfg.threads, Percentiles: cfg.Text.Percentiles}
	if cfg.cluster {
		header, err := cfg.FindPrimaries(ctx, e.target)
		if err != nil {
			return err
		}
		io.WriteString(out, header)
	}
	e.askServer()
	info := &cfg.Info
	info.Save, info.AppendOnly, info.HaveConfig = bench.ServerConfig(e.server.ID)
	if !info.HaveConfig && !cfg.cluster {
		fmt.Fprintln(stderr, "WARNING: Could not fetch server CONFIG")
	}
	// redis-benchmark's formats stay as they are: the server's identity
	// and its side of each test go to stderr, and only with the full
	// report (not -q, --csv).
	if !cfg.Quiet && !cfg.CSV && !cfg.idle && e.server.ID.Available {
		fmt.Fprintln(stderr, text.ServerLine(e.server.ID))
	}
	tty := term.IsTerminal(fdOf(out))
	if cfg.idle {
		if err := bench.Idle(ctx, e.target, cfg.Clients, out, tty); err != nil {
			return err
		}
		return exitCode(exitInterrupted)
	}
	e.doc.Config = cfg.echo(ctx, e.faults())
	cfg.Keep = cfg.files.Any()
	for _, j := range cfg.work.tests {
		cfg.Tests = append(cfg.Tests, bench.Test{Test: j.Test, Custom: j.custom,
			Payload: bench.Payload(j.Recipe, j.custom, cfg.sizes, cfg.work.keys)})
	}
	exp := e.experiment(false)
	if cfg.ContinueOnError {
		exp.OnErrorReply = watch.Errors(redactingWriter(ctx, out))
	}
	var end verdict.Ending
	res, err := bench.Run(ctx, exp, cfg.Config, bench.Output{Out: out, Err: stderr, Terminal: tty,
		Metrics: func(test string, onStart func(*scheduler.Live)) (func(*scheduler.Live), func()) {
			return e.metrics.Hook(test, metrics.ModeClosed, onStart)
		},
		Judged: func(t *report.Test, j verdict.Judgement) { judged(stderr, &end, t, j) }})
	if err != nil {
		return failed(err)
	}
	// The result files hold every test's runs so far, however the bench
	// ended.
	writeDoc := func() error {
		if !cfg.files.Any() {
			return nil
		}
		if e.doc.Tests, err = res.Tests(); err != nil {
			return err
		}
		return e.writeFiles()
	}
	switch {
	case res.Err != nil:
		if werr := writeDoc(); werr != nil {
			fmt.Fprintf(stderr, "pacer: %s\n", oneLine(message(werr)))
		}
		if experiment.IsErrorReply(res.Err) {
			// redis-benchmark's words, on stderr, and exit 1.
			return &exitError{code: exitFailed, err: res.Err, raw: true}
		}
		return res.Err
	case res.Interrupted:
		e.doc.Interrupted, end.Interrupted = true, true
	}
	if err := writeDoc(); err != nil {
		return failed(err)
	}
	if !cfg.Quiet && !cfg.CSV {
		// On stderr: stdout keeps redis-benchmark's format, and -q and
		// --csv stay as terse as its own.
		printSeed(stderr, cfg.Seed)
	}
	if code := end.Code(); code != exitOK {
		return exitCode(code)
	}
	return nil
}

func (cfg *benchConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{
		"clients": cfg.Clients, "keepalive": cfg.keepAlive, "random_keys": cfg.work.opts.Random,
		"precision": cfg.Precision, "threads": cfg.threads,
		"latency": map[closedloop.LatencyMode]string{closedloop.FirstReply: "first-reply", closedloop.PerReply: "per-reply"}[cfg.Latency],
	}
	return echoWork(ctx, report.RunConfig{Target: cfg.target.Addr, Embedded: faults, Conns: cfg.Clients, Pipeline: cfg.Pipeline,
		Dial: cfg.target, Seed: cfg.Seed, Rate: cfg.Rate, Requests: uint64(cfg.Requests)}, cfg.work, extra)
}
