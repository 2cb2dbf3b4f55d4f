package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/target"
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
		testsUse: "only run the comma-separated list of `TESTS` (default the whole suite)",
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
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Action: benchAction,
	},
		"pacer bench --embedded -t set,get -n 100000 -P 16 -q",
		"pacer bench -h 10.0.0.5 -t get -c 50 -n 1000000 --csv",
	)
}

// benchConfig is a validated `pacer bench` invocation.
type benchConfig struct {
	interval  time.Duration
	target    conn.Options
	clients   int
	requests  int
	sizes     scenarios.Sizes
	pipeline  int
	keepAlive int
	work      *workload
	quiet     bool
	csv       bool
	loop      bool
	idle      bool
	showErrs  bool
	precision int
	seed      uint64
	threads   int
	rate      scheduler.Rate
	latency   scheduler.LatencyMode
	jsonPath  string
	files     resultFiles
	text      report.TextOptions
	slo       report.SLO
	warnings  []string
	repeat    int  // runs per test (--repeat)
	ci        bool // confidence intervals of the percentiles (--ci)
	// cluster is --cluster; nodes the cluster's primaries when bench
	// started.
	cluster bool
	nodes   *target.Primaries
}

func parseBenchConfig(c *cli.Context, stdin io.Reader) (*benchConfig, error) {
	cfg := &benchConfig{}
	var err error
	if cfg.target, err = targetOptions(c); err != nil {
		return nil, err
	}
	if cfg.clients, err = parseConns(c); err != nil {
		return nil, err
	}
	if cfg.requests = c.Int("n"); cfg.requests < 1 {
		return nil, usageErrorf("-n %d: want at least one request", cfg.requests)
	}
	// redis-benchmark clamps -d to at least 1 byte and -P to at least 1.
	if cfg.sizes, err = parseSizes(c, true); err != nil {
		return nil, err
	}
	cfg.pipeline = max(c.Int("P"), 1)
	cfg.keepAlive = c.Int("k")
	if cfg.keepAlive != 0 {
		cfg.keepAlive = 1
	}
	if c.IsSet("r") {
		if n, err := strconv.ParseInt(c.String("r"), 10, 64); err == nil && n < 0 {
			if err := c.Set("r", "0"); err != nil { // redis-benchmark: negative means 0
				return nil, failed(err)
			}
		}
	}
	cfg.csv, cfg.loop, cfg.idle = c.Bool("csv"), c.Bool("l"), c.Bool("I")
	if cfg.cluster = c.Bool("cluster"); cfg.cluster {
		switch {
		case c.Bool("embedded"):
			return nil, usageErrorf("--cluster needs a Redis Cluster: --embedded is a single server")
		case cfg.idle:
			return nil, usageErrorf("--cluster with -I is not supported")
		case cfg.keepAlive == 0:
			return nil, usageErrorf("--cluster with -k 0 is not supported: connections stay open")
		}
	}
	// --precision is HdrHistogram's significant digits: redis-benchmark
	// takes a negative value as its default 3 and caps it at 4.
	cfg.precision = c.Int("precision")
	if cfg.precision < 0 {
		cfg.precision = 3
	}
	cfg.precision = min(max(cfg.precision, 1), 4)
	cfg.seed = parseSeed(c)
	cfg.threads = min(max(c.Int("threads"), 0), maxBenchThreads)
	if c.Int("threads") > maxBenchThreads {
		cfg.warnings = append(cfg.warnings, "WARNING: Too many threads, limiting threads to 500.")
	}
	if c.IsSet("rate") {
		if cfg.rate, err = scheduler.ParseRate(c.String("rate")); err != nil {
			return nil, usageErrorf("--rate: %v", err)
		}
	}
	switch c.String("latency") {
	case "first-reply":
		cfg.latency = scheduler.FirstReply
	case "per-reply":
		cfg.latency = scheduler.PerReply
	default:
		return nil, usageErrorf("--latency %q: want first-reply or per-reply", c.String("latency"))
	}
	out, err := parseOutput(c)
	if err != nil {
		return nil, err
	}
	cfg.quiet, cfg.jsonPath, cfg.showErrs, cfg.slo, cfg.interval = out.quiet, out.jsonPath, out.showErrs, out.slo, out.interval
	cfg.files, cfg.text = out.files, out.text
	if cfg.repeat, err = parseRepeat(c); err != nil {
		return nil, err
	}
	if cfg.repeat > 1 && cfg.loop {
		return nil, usageErrorf("--repeat %d cannot be combined with -l: -l already repeats the tests", cfg.repeat)
	}
	cfg.ci = c.Bool("ci")
	trailing := c.Args().Slice()
	if c.Bool("x") {
		if len(trailing) == 0 {
			return nil, usageErrorf("-x reads the last argument from stdin: give a command")
		}
		last, err := readLastArg(stdin, cfg.clients, cfg.pipeline)
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
	if err := checkClosedBudget(cfg.work, cfg.clients, cfg.pipeline); err != nil {
		return nil, err
	}
	if cfg.keepAlive == 0 {
		cfg.warnings = append(cfg.warnings, "WARNING: Keepalive disabled. You probably need "+
			"'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux and "+
			"'sudo sysctl -w net.inet.tcp.msl=1000' for Mac OS X in order "+
			"to use a lot of clients/requests")
	}
	return cfg, nil
}

// readLastArg reads -x's argument from stdin: at most what -c × -P copies
// of it may hold in flight (maxClosedInFlight), and never more than
// scenarios.MaxValueSize bytes. Reading stops one byte past the limit, so
// an endless stdin (< /dev/zero) costs the limit, not the machine.
func readLastArg(stdin io.Reader, clients, pipeline int) (string, error) {
	limit := int64(scenarios.MaxValueSize)
	why := "the largest value Redis accepts (proto-max-bulk-len)"
	if inFlight := int64(maxClosedInFlight) / (int64(clients) * int64(pipeline)); inFlight < limit {
		limit = inFlight
		if limit >= 1<<20 {
			limit &^= 1<<20 - 1 // whole MiB, for the message
		}
		why = fmt.Sprintf("the most -c %d × -P %d copies may hold in flight (%s): lower -c or -P", clients, pipeline, bytesize.Format(maxClosedInFlight))
	}
	return readLastArgLimit(stdin, limit, why)
}

func readLastArgLimit(stdin io.Reader, limit int64, why string) (string, error) {
	// A strings.Builder grows by appending and hands its bytes over
	// without a copy.
	var b strings.Builder
	if _, err := io.Copy(&b, io.LimitReader(stdin, limit+1)); err != nil {
		return "", failed(fmt.Errorf("read stdin: %w", err))
	}
	if int64(b.Len()) > limit {
		return "", usageErrorf("-x: stdin holds more than %s, %s", bytesize.Format(limit), why)
	}
	return b.String(), nil
}

// payload is what the report header calls the payload: the value size
// (its mean when sizes vary) or, for a command given after the flags, the
// encoded command's size, as redis-benchmark reports it.
func (cfg *benchConfig) payload(t workTest) int {
	if t.custom {
		if m, err := t.recipe.Build(); err == nil {
			s := scenarios.NewMixStream(m, 1, cfg.work.keys)
			b, _ := s.Next()
			return len(b)
		}
	}
	if n, fixed := cfg.sizes.Fixed(); fixed {
		return n
	}
	return int(cfg.sizes.Mean() + 0.5)
}

// title labels a test in every output; a throttled loop says it is one.
func (cfg *benchConfig) title(j workTest) string {
	if cfg.rate.IsZero() {
		return j.title
	}
	return fmt.Sprintf("%s [closed loop at %s req/s]", j.title, cfg.rate)
}

func benchAction(c *cli.Context) error {
	cfg, err := parseBenchConfig(c, c.App.Reader)
	if err != nil {
		return err
	}
	e, err := openEnv(c, envConfig{target: &target.Target{Options: cfg.target, Cluster: cfg.cluster},
		files: cfg.files, quiet: cfg.quiet || cfg.csv, mode: "closed", banner: true})
	if err != nil {
		return err // a usage error's one line: the warnings come after
	}
	defer e.close()
	stderr := e.stderr
	for _, w := range cfg.warnings {
		fmt.Fprintln(stderr, w)
	}
	ctx, out := c.Context, e.out
	jobs := cfg.work.tests
	info := report.BenchInfo{Clients: cfg.clients, KeepAlive: cfg.keepAlive, Threads: cfg.threads, Percentiles: cfg.text.Percentiles}
	if cfg.cluster {
		// redis-benchmark --cluster: the primaries first, on stdout, in
		// every output format; one thread per primary by default.
		if cfg.nodes, err = e.target.Primaries(ctx, true); err != nil {
			return err
		}
		io.WriteString(out, cfg.nodes.Header())
		info.Cluster = cfg.nodes.Configs(ctx)
		if info.Threads == 0 {
			info.Threads = len(cfg.nodes.Nodes)
		}
	}
	e.askServer()
	info.Save, info.AppendOnly, info.HaveConfig = benchConfigOf(e.server.ID)
	if !info.HaveConfig && !cfg.cluster {
		fmt.Fprintln(stderr, "WARNING: Could not fetch server CONFIG")
	}
	// redis-benchmark's formats stay as they are: the server's identity
	// and its side of each test go to stderr, and only with the full
	// report (not -q, --csv).
	full := !cfg.quiet && !cfg.csv
	if full && !cfg.idle && e.server.ID.Available {
		fmt.Fprintln(stderr, report.ServerLine(e.server.ID))
	}
	if cfg.idle {
		return benchIdle(ctx, cfg, e, out)
	}
	e.doc.Config = cfg.echo(ctx, e.faults())
	// With -l every loop's result of a test merges into one (histograms
	// added, counts summed), so memory stays flat however long it loops;
	// with --repeat, runs keeps each test's runs (merged is their pool).
	merged := make([]*scheduler.Result, len(jobs))
	mergedServer := make([]*serverinfo.Stats, len(jobs))
	runs := make([][]*scheduler.Result, len(jobs))
	writeDoc := func() error {
		if !cfg.files.Any() {
			return nil
		}
		e.doc.Tests = e.doc.Tests[:0]
		for i, res := range merged {
			if res == nil {
				continue
			}
			o := report.TestOptions{ID: jobs[i].id(), SLO: cfg.slo, Percentiles: true, CI: cfg.ci}
			// A merged result (-l) is judged as one.
			t, _, err := report.NewTest(res, report.TestOptions{ID: o.ID, SLO: o.SLO, Percentiles: true, CI: o.CI, Server: mergedServer[i]})
			if err != nil {
				return err
			}
			t.Name = cfg.title(jobs[i])
			if cfg.repeat > 1 {
				if t.Repeats, err = report.RepeatsOf(runs[i], o); err != nil {
					return err
				}
			}
			e.doc.Tests = append(e.doc.Tests, *t)
		}
		return e.writeFiles()
	}
	if cfg.csv {
		if err := report.BenchCSVHeader(out, cfg.text); err != nil {
			return failed(err)
		}
	}
	errPrinter := newErrorPrinter(redactingWriter(ctx, out))
	progress := term.IsTerminal(fdOf(out)) && !cfg.csv
	exp := e.experiment(false)
	if cfg.showErrs {
		exp.OnErrorReply = errPrinter.print
	}
	code := exitOK
	for round := 0; ; round++ {
		for i, j := range jobs {
			info.DataSize = cfg.payload(j)
			var reps []*scheduler.Result
			for k := 0; k < cfg.repeat; k++ {
				res, st, runErr := cfg.runOne(ctx, e, exp, j, (round*len(jobs)+i)*cfg.repeat+k, out, progress, info)
				if st != nil && full && res != nil && !res.Interrupted && runErr == nil {
					fmt.Fprintln(stderr, report.ServerBrief(st))
				}
				var t *report.Test
				var jd report.Judgement
				if res != nil {
					reps = append(reps, res)
					if cfg.repeat > 1 {
						runs[i] = append(runs[i], res)
					}
					var err error
					if t, jd, err = report.NewTest(res, report.TestOptions{SLO: cfg.slo}); err != nil {
						return failed(err)
					}
					if t.SLO != nil {
						for _, l := range t.SLO.Lines() {
							fmt.Fprintf(stderr, "%s: %s\n", safetext.Escape(cfg.title(j)), l)
						}
					}
					if cfg.files.Any() {
						if merged[i] == nil {
							// A copy: with --repeat the runs stay as they were.
							merged[i], mergedServer[i] = res.Clone(), st
						} else {
							merged[i].Merge(res)
							mergedServer[i] = mergeStats(mergedServer[i], st)
						}
					}
				}
				if runErr != nil {
					if werr := writeDoc(); werr != nil {
						fmt.Fprintf(stderr, "pacer: %v\n", werr)
					}
					if experiment.IsErrorReply(runErr) {
						// redis-benchmark's words, on stderr, and exit 1.
						return &exitError{code: exitFailed, err: runErr, raw: true}
					}
					return runErr
				}
				if ctx.Err() != nil {
					e.doc.Interrupted = true
					if err := writeDoc(); err != nil {
						return failed(err)
					}
					cfg.printSeed(stderr)
					return exitCode(exitInterrupted)
				}
				code = worst(code, judged(stderr, t, jd))
			}
			if err := cfg.writeNotes(out, stderr, j, reps); err != nil {
				return failed(err)
			}
		}
		if !(len(jobs) == 1 && jobs[0].custom) && !cfg.csv {
			fmt.Fprint(out, "\n")
		}
		if !cfg.loop {
			break
		}
	}
	if err := writeDoc(); err != nil {
		return failed(err)
	}
	cfg.printSeed(stderr)
	if code != exitOK {
		return exitCode(code)
	}
	return nil
}

// writeNotes writes, with --repeat, the median and min–max of a test's
// runs and, with --ci, the confidence intervals of its percentiles: on
// stdout after redis-benchmark's report, on stderr with -q and --csv so
// their formats stay as redis-benchmark's.
func (cfg *benchConfig) writeNotes(out, stderr io.Writer, j workTest, reps []*scheduler.Result) error {
	if len(reps) == 0 || (cfg.repeat == 1 && !cfg.ci) {
		return nil
	}
	w := out
	if cfg.quiet || cfg.csv {
		w = stderr
	}
	t, _, err := report.NewTest(scheduler.Pool(reps), report.TestOptions{})
	if err != nil {
		return err
	}
	var rep *report.Repeats
	if cfg.repeat > 1 {
		if rep, err = report.RepeatsOf(reps, report.TestOptions{}); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s: %d runs\n", safetext.Escape(cfg.title(j)), len(reps)); err != nil {
			return err
		}
	}
	return report.WriteNotes(w, t, cfg.ci, rep)
}

// printSeed ends the full report with the seed, on stderr: stdout keeps
// redis-benchmark's format, and -q and --csv stay as terse as its own.
func (cfg *benchConfig) printSeed(stderr io.Writer) {
	if !cfg.quiet && !cfg.csv {
		printSeed(stderr, cfg.seed)
	}
}

// runOne runs one test once and reports it in redis-benchmark's format,
// returning what the server counted during it.
func (cfg *benchConfig) runOne(ctx context.Context, e *runEnv, exp *experiment.Env, j workTest, n int, out io.Writer, progress bool, info report.BenchInfo) (*scheduler.Result, *serverinfo.Stats, error) {
	title := cfg.title(j)
	seed := cfg.seed + uint64(n)*1_000_003
	last := 0
	// redis-benchmark's progress line on a terminal; pacer's own
	// progress lines on stderr otherwise (not with -q or --csv).
	bx := *exp
	bx.Watch = func(w experiment.Watched) (func(*scheduler.Live), func()) {
		ch := make(chan *scheduler.Live, 1)
		stop := func() {}
		switch {
		case progress:
			stop = benchProgress(out, title, ch, &last)
		case !cfg.quiet && !cfg.csv:
			stop = watch.Progress(watch.On(e.stderr), title, ch)
		}
		onStart, end := e.metrics.Hook(w.Test, metrics.ModeClosed, func(l *scheduler.Live) { ch <- l })
		return onStart, func() { end(); stop() }
	}
	res, st, err := bx.RunClosed(ctx, experiment.Closed{
		Test: cfg.work.testOf(j), Name: title, Metric: title, Conns: cfg.clients, Primaries: cfg.nodes,
		Config: scheduler.ClosedConfig{Requests: uint64(cfg.requests), Pipeline: cfg.pipeline, Latency: cfg.latency,
			Rate: cfg.rate, Precision: cfg.precision, Interval: cfg.interval, ContinueOnError: cfg.showErrs},
		StreamSeed:  func(i int) uint64 { return seed + uint64(i) },
		ClusterSeed: cfg.seed + uint64(n)*7_919,
		Reconnect:   cfg.keepAlive == 0,
	})
	if res == nil || res.Interrupted || err != nil && !experiment.IsErrorReply(err) {
		return res, st, err
	}
	// redis-benchmark's output stays as it is: the handshakes go to stderr
	// with the full report, as the server's side does.
	t, _, terr := report.NewTest(res, report.TestOptions{})
	if terr != nil {
		return res, st, failed(terr)
	}
	if line := report.TLSLine(t); line != "" && !cfg.quiet && !cfg.csv {
		fmt.Fprintf(e.stderr, "tls: %s\n", line)
	}
	if err != nil {
		return res, st, err
	}
	switch {
	case cfg.csv:
		err = report.BenchCSV(out, title, t, cfg.text)
	case cfg.quiet:
		err = report.BenchQuiet(out, title, t, last, cfg.text)
		if err == nil {
			err = report.BenchCommands(out, t, true, cfg.text)
		}
	default:
		err = report.BenchFull(out, title, t, info, last)
		if err == nil {
			err = report.BenchCommands(out, t, false, cfg.text)
		}
	}
	if err != nil {
		return res, st, failed(err)
	}
	return res, st, nil
}

// benchProgress prints redis-benchmark's progress line every 250 ms until
// stopped, leaving in *last the length of the last line printed.
func benchProgress(out io.Writer, title string, live <-chan *scheduler.Live, last *int) (stop func()) {
	var prevDone uint64
	var prevAt time.Duration
	var prevHist *hdrhistogram.Histogram
	return watch.Live(live, 250*time.Millisecond,
		func(l *scheduler.Live) { prevHist = l.Micros.Snapshot() },
		func(l *scheduler.Live) {
			p := l.Progress()
			finished := p.Completed + p.Errors
			interval, now := l.Micros.Interval(prevHist)
			prevHist = now
			n, err := report.BenchProgress(out, title,
				float64(finished-prevDone)/(p.Elapsed-prevAt).Seconds(), float64(finished)/p.Elapsed.Seconds(),
				histo.CMean(interval)/1000, histo.CMean(now)/1000, *last)
			if err == nil {
				*last = n
			}
			prevDone, prevAt = finished, p.Elapsed
		}, nil)
}

// benchConfigOf is what redis-benchmark's header shows of the server's
// configuration: save and appendonly, when CONFIG GET gave both.
func benchConfigOf(id *serverinfo.Identity) (save, aof string, ok bool) {
	save, ok1 := id.Config["save"]
	aof, ok2 := id.Config["appendonly"]
	return save, aof, ok1 && ok2
}

// benchIdle is -I: open the connections and wait until interrupted.
func benchIdle(ctx context.Context, cfg *benchConfig, e *runEnv, out io.Writer) error {
	fmt.Fprintf(out, "Creating %d idle connections and waiting forever (Ctrl+C when done)\n", cfg.clients)
	conns, err := e.target.BenchPool(ctx, e.target.Options, cfg.clients)
	if err != nil {
		return err
	}
	defer target.CloseAll(conns)
	tty := term.IsTerminal(fdOf(out))
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitCode(exitInterrupted)
		case <-tick.C:
			if tty {
				fmt.Fprintf(out, "clients: %d\r", len(conns))
			}
		}
	}
}

func (cfg *benchConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{
		"clients": cfg.clients, "keepalive": cfg.keepAlive, "random_keys": cfg.work.opts.Random,
		"precision": cfg.precision, "threads": cfg.threads,
		"latency": map[scheduler.LatencyMode]string{scheduler.FirstReply: "first-reply", scheduler.PerReply: "per-reply"}[cfg.latency],
	}
	if len(cfg.work.tests) == 1 && (cfg.work.tests[0].custom || cfg.work.mixed) {
		extra["command"] = cfg.work.tests[0].title
	}
	return commonConfig{
		target: cfg.target.Addr, embedded: faults, conns: cfg.clients, pipeline: cfg.pipeline, dial: cfg.target,
		sizes: cfg.sizes, keyspace: cfg.work.opts.Keyspace, keyDist: cfg.work.keys,
		seed: cfg.seed, tests: testIDs(cfg.work), rate: cfg.rate, requests: uint64(cfg.requests),
	}.echo(ctx, extra)
}
