package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
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
	metrics   *liveMetrics
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
	tls       *handshakes // nil over plain TCP
	repeat    int         // runs per test (--repeat)
	ci        bool        // confidence intervals of the percentiles (--ci)
	// cluster is --cluster; nodes the cluster found when bench started.
	cluster bool
	nodes   *benchCluster
}

func parseBenchConfig(c *cli.Context, stdin io.Reader) (*benchConfig, error) {
	cfg := &benchConfig{}
	var err error
	if cfg.target, err = target(c); err != nil {
		return nil, err
	}
	cfg.tls = watchTLS(&cfg.target)
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
		why = fmt.Sprintf("the most -c %d × -P %d copies may hold in flight (%s): lower -c or -P", clients, pipeline, formatBytes(maxClosedInFlight))
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
		return "", usageErrorf("-x: stdin holds more than %s, %s", formatBytes(limit), why)
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
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	jobs := cfg.work.tests
	if cfg.metrics, err = startMetrics(c); err != nil {
		return err
	}
	defer cfg.metrics.close()
	emb, stopEmbedded, err := startEmbedded(c, &cfg.target, stderr)
	if err != nil {
		return err // a usage error's one line: the warnings come after
	}
	defer stopEmbedded()
	cfg.metrics.announce(stderr)
	for _, w := range cfg.warnings {
		fmt.Fprintln(stderr, w)
	}
	ctx := c.Context
	out := stdout
	if cfg.files.stdout() {
		out = stderr
	}
	info := report.BenchInfo{Clients: cfg.clients, KeepAlive: cfg.keepAlive, Threads: cfg.threads, Percentiles: cfg.text.Percentiles}
	if cfg.cluster {
		// redis-benchmark --cluster: the primaries first, on stdout, in
		// every output format; one thread per primary by default.
		if cfg.nodes, err = discoverCluster(ctx, cfg.target, stderr, true); err != nil {
			return err
		}
		cfg.nodes.header(out)
		info.Cluster = cfg.nodes.configs(ctx)
		if info.Threads == 0 {
			info.Threads = len(cfg.nodes.nodes)
		}
	}
	srv := askServer(ctx, cfg.target, stderr)
	info.Save, info.AppendOnly, info.HaveConfig = benchConfigOf(srv.id)
	if !info.HaveConfig && !cfg.cluster {
		fmt.Fprintln(stderr, "WARNING: Could not fetch server CONFIG")
	}
	// redis-benchmark's formats stay as they are: the server's identity
	// and its side of each test go to stderr, and only with the full
	// report (not -q, --csv).
	full := !cfg.quiet && !cfg.csv
	if full && !cfg.idle && srv.id.Available {
		fmt.Fprintln(stderr, report.ServerLine(srv.id))
	}
	if cfg.idle {
		return benchIdle(ctx, cfg, out)
	}
	doc := &report.Document{
		Schema: report.Schema, Mode: "closed", Tool: report.Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339), Config: cfg.echo(ctx, faultsOf(emb)), Tests: []report.Test{},
		Server: srv.id,
	}
	// With -l every loop's result of a test merges into one (histograms
	// added, counts summed), so memory stays flat however long it loops.
	merged := make([]*scheduler.Result, len(jobs))
	mergedServer := make([]*serverinfo.Stats, len(jobs))
	// With --repeat each test's runs (merged is then their pool).
	runs := make([][]*scheduler.Result, len(jobs))
	writeDoc := func() error {
		if !cfg.files.any() {
			return nil
		}
		doc.Tests = doc.Tests[:0]
		for i, res := range merged {
			if res == nil {
				continue
			}
			t, err := testJSON(res, cfg.ci)
			if err != nil {
				return err
			}
			t.ID, t.Name = jobs[i].id(), cfg.title(jobs[i])
			if t.SLO, err = cfg.slo.Check(res); err != nil {
				return err
			}
			if cfg.repeat > 1 {
				if t.Repeats, err = repeatsOf(runs[i], jobs[i].id(), cfg.ci, cfg.slo); err != nil {
					return err
				}
			}
			t.Server = mergedServer[i]
			// A merged result (-l) is judged as one.
			j := report.Judge(res, t.SLO)
			t.Verdict, t.VerdictReason = j.Verdict, j.Reason
			doc.Tests = append(doc.Tests, t)
		}
		return cfg.files.write(stdout, doc)
	}
	if cfg.csv {
		if err := report.BenchCSVHeaderWith(out, cfg.text); err != nil {
			return failed(err)
		}
	}
	errPrinter := newErrorPrinter(redactingWriter(ctx, out))
	progress := term.IsTerminal(fdOf(out)) && !cfg.csv
	code := exitOK
	for round := 0; ; round++ {
		for i, j := range jobs {
			info.DataSize = cfg.payload(j)
			var reps []*scheduler.Result
			for k := 0; k < cfg.repeat; k++ {
				res, st, runErr := cfg.runOne(ctx, j, (round*len(jobs)+i)*cfg.repeat+k, out, stderr, progress, info, errPrinter, srv)
				redactResult(ctx, res)
				if st != nil && full && res != nil && !res.Interrupted && runErr == nil {
					fmt.Fprintln(stderr, report.ServerBrief(st))
				}
				var sloRes *report.SLOResult
				if res != nil {
					reps = append(reps, res)
					if cfg.repeat > 1 {
						runs[i] = append(runs[i], res)
					}
					var err error
					if sloRes, err = cfg.slo.Check(res); err != nil {
						return failed(err)
					}
					if sloRes != nil {
						for _, l := range sloRes.Lines() {
							fmt.Fprintf(stderr, "%s: %s\n", safetext.Escape(cfg.title(j)), l)
						}
					}
					if cfg.files.any() {
						if merged[i] == nil {
							// A copy: with --repeat the runs stay as they were.
							merged[i], mergedServer[i] = cloneResult(res), st
						} else {
							mergeResult(merged[i], res)
							mergedServer[i].Merge(st)
						}
					}
				}
				if runErr != nil {
					if werr := writeDoc(); werr != nil {
						fmt.Fprintf(stderr, "pacer: %v\n", werr)
					}
					return runErr
				}
				if ctx.Err() != nil {
					doc.Interrupted = true
					if err := writeDoc(); err != nil {
						return failed(err)
					}
					cfg.printSeed(stderr)
					return exitCode(exitInterrupted)
				}
				code = worst(code, judge(stderr, res, sloRes))
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
	res := pool(reps)
	var rep *report.Repeats
	if cfg.repeat > 1 {
		figs := make([]map[string]float64, len(reps))
		for k, r := range reps {
			figs[k] = report.Figures(r)
		}
		rep = report.NewRepeats(figs, nil)
		if _, err := fmt.Fprintf(w, "%s: %d runs\n", safetext.Escape(cfg.title(j)), len(reps)); err != nil {
			return err
		}
	}
	return writeNotes(w, res, cfg.ci, rep)
}

// printSeed ends the full report with the seed, on stderr: stdout keeps
// redis-benchmark's format, and -q and --csv stay as terse as its own.
func (cfg *benchConfig) printSeed(stderr io.Writer) {
	if !cfg.quiet && !cfg.csv {
		printSeed(stderr, cfg.seed)
	}
}

// runOne dials, runs and reports one test, and returns what the server
// counted during it.
func (cfg *benchConfig) runOne(ctx context.Context, j workTest, n int, out, stderr io.Writer, progress bool, info report.BenchInfo, errs *errorPrinter, srv *serverSide) (*scheduler.Result, *serverinfo.Stats, error) {
	cfg.tls.take() // the test's own handshakes only
	var cl *scheduler.ClosedCluster
	var conns []*conn.Conn
	var err error
	if cfg.nodes != nil {
		var of []int
		if conns, of, err = cfg.nodes.dial(ctx, cfg.clients, stderr); err != nil {
			return nil, nil, err
		}
		cl = cfg.nodes.closed(of, cfg.seed+uint64(n)*7_919)
	} else if conns, err = dialBench(ctx, cfg.target, cfg.clients, stderr); err != nil {
		return nil, nil, err
	}
	var before *serverinfo.Snapshot
	if cl == nil { // the seed's counters are not the cluster's
		before = srv.before()
	}
	res, err := cfg.runDialed(ctx, conns, cl, j, n, out, stderr, progress, info, errs)
	if cfg.nodes != nil {
		cfg.nodes.wait()
	}
	if res == nil {
		return res, nil, err
	}
	res.TLS = cfg.tls.take()
	// redis-benchmark's output stays as it is: the handshakes go to stderr
	// with the full report, as the server's side does.
	if line := report.TLSLine(res); line != "" && !cfg.quiet && !cfg.csv && !res.Interrupted {
		fmt.Fprintf(stderr, "tls: %s\n", line)
	}
	if cl != nil {
		return res, nil, err
	}
	return res, srv.since(before), err
}

// runDialed runs and reports one test on conns.
func (cfg *benchConfig) runDialed(ctx context.Context, conns []*conn.Conn, cl *scheduler.ClosedCluster, j workTest, n int, out, stderr io.Writer, progress bool, info report.BenchInfo, errs *errorPrinter) (*scheduler.Result, error) {
	var err error
	title := cfg.title(j)
	var templateErr error
	ccfg := scheduler.ClosedConfig{
		Name:         title,
		Requests:     uint64(cfg.requests),
		Pipeline:     cfg.pipeline,
		Latency:      cfg.latency,
		Rate:         cfg.rate,
		Precision:    cfg.precision,
		CommandNames: j.names,
		Interval:     cfg.interval,
		NewCommands: func(i int) scheduler.Commands {
			s, err := cfg.work.stream(j, cfg.seed+uint64(n)*1_000_003+uint64(i))
			if err != nil {
				templateErr = err
			}
			return s
		},
		ContinueOnError: cfg.showErrs,
		Cluster:         cl,
	}
	if cfg.showErrs {
		ccfg.OnErrorReply = errs.print
	}
	if cfg.keepAlive == 0 {
		ccfg.Reconnect = func(ctx context.Context) (*conn.Conn, error) { return conn.Dial(ctx, cfg.target) }
	}
	last := 0
	stopProgress := func() {}
	if !progress && !cfg.quiet && !cfg.csv {
		// stdout is not a terminal: pacer's own progress lines on stderr.
		ch := make(chan *scheduler.Live, 1)
		ccfg.OnStart = func(l *scheduler.Live) { ch <- l }
		stopProgress = newProgress(stderr).watch(title, ch)
	}
	if progress {
		ch := make(chan *scheduler.Live, 1)
		ccfg.OnStart = func(l *scheduler.Live) { ch <- l }
		stopProgress = benchProgress(out, title, ch, &last)
	}
	var endMetrics func()
	ccfg.OnStart, endMetrics = cfg.metrics.hook(title, metrics.ModeClosed, ccfg.OnStart)
	res, runErr := scheduler.RunClosed(ctx, conns, ccfg)
	endMetrics()
	stopProgress()
	if templateErr != nil {
		return nil, usageErrorf("command: %v", templateErr)
	}
	if runErr != nil {
		var er *scheduler.ErrorReply
		var lost *scheduler.ConnLostError
		switch {
		case errors.As(runErr, &er), errors.As(runErr, &lost):
			// redis-benchmark's words, on stderr, and exit 1.
			return res, &exitError{code: exitFailed, err: runErr, raw: true}
		}
		return res, failed(runErr)
	}
	if res.Interrupted {
		return res, nil
	}
	switch {
	case cfg.csv:
		err = report.BenchCSVWith(out, title, res, cfg.text)
	case cfg.quiet:
		err = report.BenchQuietWith(out, title, res, last, cfg.text)
		if err == nil {
			err = report.BenchCommandsWith(out, res, true, cfg.text)
		}
	default:
		err = report.BenchFull(out, title, res, info, last)
		if err == nil {
			err = report.BenchCommandsWith(out, res, false, cfg.text)
		}
	}
	if err != nil {
		return res, failed(err)
	}
	return res, nil
}

// benchProgress prints redis-benchmark's progress line every 250 ms until
// stopped, leaving in *last the length of the last line printed.
func benchProgress(out io.Writer, title string, live <-chan *scheduler.Live, last *int) (stop func()) {
	var prevDone uint64
	var prevAt time.Duration
	var prevHist *hdrhistogram.Histogram
	return watchLive(live, 250*time.Millisecond,
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

// dialBench opens the connections, with redis-benchmark's message when the
// server cannot be reached.
func dialBench(ctx context.Context, o conn.Options, n int, stderr io.Writer) ([]*conn.Conn, error) {
	all, failed, err := conn.DialSome(ctx, o, n)
	if failed < n {
		// Some connections will do: go on with them and say so.
		if failed > 0 {
			fmt.Fprintf(stderr, "pacer: %d of %d connections to %s could not be opened (%v); going on with %d\n",
				failed, n, o.Addr, err, n-failed)
		}
		return liveConns(all), nil
	}
	if errors.Is(err, conn.ErrTLS) {
		return nil, &exitError{code: exitFailed, raw: true,
			err: fmt.Errorf("Could not connect to Redis at %s: %v", o.Addr, err)}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		where := o.Addr
		msg := opErr.Err.Error()
		if se, ok := opErr.Err.(*os.SyscallError); ok {
			msg = se.Err.Error()
		}
		return nil, &exitError{code: exitFailed, raw: true,
			err: fmt.Errorf("Could not connect to Redis at %s: %s", where, capitalize(msg))}
	}
	return nil, &exitError{code: exitFailed, raw: true, err: fmt.Errorf("Node %s replied with error: %v", o.Addr, err)}
}

// benchConfigOf is what redis-benchmark's header shows of the server's
// configuration: save and appendonly, when CONFIG GET gave both.
func benchConfigOf(id *serverinfo.Identity) (save, aof string, ok bool) {
	save, ok1 := id.Config["save"]
	aof, ok2 := id.Config["appendonly"]
	return save, aof, ok1 && ok2
}

// benchIdle is -I: open the connections and wait until interrupted.
func benchIdle(ctx context.Context, cfg *benchConfig, out io.Writer) error {
	fmt.Fprintf(out, "Creating %d idle connections and waiting forever (Ctrl+C when done)\n", cfg.clients)
	conns, err := dialBench(ctx, cfg.target, cfg.clients, os.Stderr)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
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

// mergeResult adds the result of another loop of the same test to into:
// counts, windows and error codes summed, histograms merged.
func mergeResult(into, from *scheduler.Result) {
	if from.TLS != nil {
		if into.TLS == nil {
			into.TLS = &scheduler.TLSHandshakes{}
		}
		into.TLS.Merge(from.TLS)
	}
	into.Counts.Add(from.Counts)
	into.Window += from.Window
	into.Clamped += from.Clamped
	into.ConnsLost += from.ConnsLost
	into.Reconnects += from.Reconnects
	into.Blocked += from.Blocked
	into.HeldSent += from.HeldSent
	into.HeldUnsent += from.HeldUnsent
	into.WarmupCounts.Add(from.WarmupCounts)
	into.DroppedBacklog += from.DroppedBacklog
	into.Unsolicited += from.Unsolicited
	into.BytesSent += from.BytesSent
	into.BytesReceived += from.BytesReceived
	into.Intervals = appendSeries(into.Intervals, from.Intervals)
	into.Interrupted = into.Interrupted || from.Interrupted
	if into.FirstError == "" {
		into.FirstError = from.FirstError
	}
	if into.Verdict == scheduler.VerdictOK && from.Verdict != scheduler.VerdictOK {
		into.Verdict, into.VerdictReason = from.Verdict, from.VerdictReason
	}
	into.ErrorCodes = scheduler.MergeErrorCodes(into.ErrorCodes, from.ErrorCodes)
	into.Response = mergeHist(into.Response, from.Response)
	into.Service = mergeHist(into.Service, from.Service)
	into.Lag = mergeHist(into.Lag, from.Lag)
	into.Micros = mergeHist(into.Micros, from.Micros)
	into.Nodes = mergeNodes(into.Nodes, from.Nodes)
	for _, fc := range from.Commands {
		found := false
		for k := range into.Commands {
			ic := &into.Commands[k]
			if ic.Name != fc.Name {
				continue
			}
			found = true
			ic.Counts.Add(fc.Counts)
			ic.Intervals = appendSeries(ic.Intervals, fc.Intervals)
			ic.ErrorCodes = scheduler.MergeErrorCodes(ic.ErrorCodes, fc.ErrorCodes)
			// A single command shares the total's histograms: merged above.
			if ic.Response != into.Response {
				ic.Response = mergeHist(ic.Response, fc.Response)
			}
			if ic.Service != into.Service {
				ic.Service = mergeHist(ic.Service, fc.Service)
			}
			if ic.Lag != into.Lag {
				ic.Lag = mergeHist(ic.Lag, fc.Lag)
			}
		}
		if !found {
			into.Commands = append(into.Commands, fc)
		}
	}
}

// mergeNodes adds the per-node results of another loop, node by address.
func mergeNodes(into, from []scheduler.NodeResult) []scheduler.NodeResult {
	for _, fn := range from {
		found := false
		for k := range into {
			in := &into[k]
			if in.Addr != fn.Addr {
				continue
			}
			found = true
			in.Counts.Add(fn.Counts)
			in.Redirects += fn.Redirects
			in.Moved += fn.Moved
			in.Ask += fn.Ask
			in.Joined = in.Joined && fn.Joined // in the slot map at the start of a run
			in.Connections = max(in.Connections, fn.Connections)
			in.Response = mergeHist(in.Response, fn.Response)
		}
		if !found {
			fn.Response = copyHist(fn.Response) // merges into it leave from's as it was
			into = append(into, fn)
		}
	}
	return into
}

// appendSeries continues a loop's interval series with the next loop's,
// shifted to start where the first ends, so the merged test's intervals
// still add up to it.
func appendSeries(into, from []scheduler.Interval) []scheduler.Interval {
	var end time.Duration
	if n := len(into); n > 0 {
		end = into[n-1].Start + into[n-1].Duration
	}
	for _, iv := range from {
		iv.Start += end
		into = append(into, iv)
	}
	return into
}

// mergeHist adds from into into (either may be nil); the histograms share
// their geometry, so nothing is dropped.
func mergeHist(into, from *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	switch {
	case from == nil:
		return into
	case into == nil:
		return from
	}
	into.Merge(from)
	return into
}
