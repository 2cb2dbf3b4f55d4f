package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// benchCommand is `pacer bench`: redis-benchmark's closed loop with its
// flags, defaults, tests and output formats.
func benchCommand() *cli.Command {
	flags := append(append(append(targetFlags(), embeddedFlags()...), workloadFlags()...),
		&cli.StringFlag{Name: "u", Usage: "server `URI`: redis://[user:password@]host[:port][/db]", Category: "target"},
		&cli.IntFlag{Name: "c", Value: 50, Usage: "number of parallel connections", Category: "load"},
		&cli.IntFlag{Name: "n", Value: 100000, Usage: "total number of requests", Category: "load"},
		&cli.StringFlag{Name: "d", Value: "3", Usage: "data `SIZE` of SET/GET values in bytes (pacer also takes 32-1024 and 64:8,4096:2)", Category: "workload"},
		&cli.IntFlag{Name: "P", Value: 1, Usage: "pipeline `NUMREQ` requests", Category: "load"},
		&cli.IntFlag{Name: "k", Value: 1, Usage: "1=keep alive 0=reconnect", Category: "load"},
		&cli.StringFlag{Name: "r", Usage: "use random keys: __rand_int__ becomes a 12-digit number below `KEYSPACELEN`", Category: "workload"},
		&cli.BoolFlag{Name: "q", Usage: "quiet: just show query/sec values", Category: "output"},
		&cli.BoolFlag{Name: "csv", Usage: "output in CSV format", Category: "output"},
		&cli.BoolFlag{Name: "l", Usage: "loop: run the tests forever", Category: "load"},
		&cli.StringFlag{Name: "t", Usage: "only run the comma-separated list of `TESTS`", Category: "workload"},
		&cli.BoolFlag{Name: "I", Usage: "idle mode: just open N idle connections and wait", Category: "load"},
		&cli.BoolFlag{Name: "x", Usage: "read the last argument from stdin", Category: "workload"},
		&cli.BoolFlag{Name: "e", Usage: "show server errors (at most one per second) and keep going, instead of exiting on the first", Category: "output"},
		&cli.IntFlag{Name: "precision", Value: 3, Usage: "significant digits of the latency histogram (1 to 4)", Category: "output"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed for the random keys", DefaultText: "from the clock", Category: "workload"},
		&cli.IntFlag{Name: "threads", Usage: "enable multi-thread mode with `NUM` threads", Category: "load"},
		&cli.BoolFlag{Name: "enable-tracking", Usage: "send CLIENT TRACKING on before starting", Category: "target"},
		&cli.BoolFlag{Name: "cluster", Usage: "cluster mode (not supported yet)", Category: "target"},
		&cli.BoolFlag{Name: "tls", Usage: "TLS (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "sni", Usage: "TLS server name (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "cacert", Usage: "TLS CA certificate (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "cacertdir", Usage: "TLS CA directory (not supported yet)", Category: "tls"},
		&cli.BoolFlag{Name: "insecure", Usage: "skip TLS verification (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "cert", Usage: "TLS client certificate (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "key", Usage: "TLS client key (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "tls-ciphers", Usage: "TLS ciphers (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "tls-ciphersuites", Usage: "TLS 1.3 cipher suites (not supported yet)", Category: "tls"},
		&cli.StringFlag{Name: "rate", Usage: "throttle the closed loop to `RATE` requests per second (memtier's --rate-limiting); latency still counts from the actual send", Category: "pacer"},
		&cli.StringFlag{Name: "latency", Value: "first-reply", Usage: "first-reply (redis-benchmark: a batch's first reply, recorded for each of its replies) or per-reply", Category: "pacer"},
		&cli.StringFlag{Name: "json", Usage: "write the pacer.result/v1 JSON to `FILE` (- for stdout)", Category: "pacer"},
		&cli.StringFlag{Name: "slo", Usage: "`CLAUSES` every test must meet, e.g. p99<5ms,errors<0.1%; verdicts on stderr, a miss exits 3", Category: "pacer"},
	)
	return &cli.Command{
		Name:      "bench",
		Usage:     "closed loop: a drop-in for redis-benchmark (same flags, tests and output)",
		ArgsUsage: "[COMMAND ARGS...]",
		Flags:     flags,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Action: benchAction,
	}
}

// benchConfig is a validated `pacer bench` invocation.
type benchConfig struct {
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
	slo       report.SLO
	warnings  []string
}

func parseBenchConfig(c *cli.Context, stdin io.Reader) (*benchConfig, error) {
	for _, name := range []string{"cluster", "tls", "sni", "cacert", "cacertdir", "insecure", "cert", "key", "tls-ciphers", "tls-ciphersuites"} {
		if c.IsSet(name) {
			return nil, usageErrorf("--%s is not supported yet (cluster mode and TLS are planned)", name)
		}
	}
	cfg := &benchConfig{}
	var err error
	if cfg.target, err = target(c); err != nil {
		return nil, err
	}
	if u := c.String("u"); u != "" {
		if err := applyURI(&cfg.target, u); err != nil {
			return nil, err
		}
	}
	cfg.target.ClientTracking = c.Bool("enable-tracking")
	if cfg.clients = c.Int("c"); cfg.clients < 1 || cfg.clients > 10000 {
		return nil, usageErrorf("-c %d: want 1 to 10000 connections", cfg.clients)
	}
	if cfg.requests = c.Int("n"); cfg.requests < 1 {
		return nil, usageErrorf("-n %d: want at least one request", cfg.requests)
	}
	// redis-benchmark clamps -d to 1 byte .. 1 GiB and -P to at least 1.
	if n, err := strconv.Atoi(c.String("d")); err == nil {
		cfg.sizes = scenarios.FixedSize(min(max(n, 1), 1<<30))
	} else if cfg.sizes, err = scenarios.ParseSizes(c.String("d")); err != nil {
		return nil, usageErrorf("%v", err)
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
	cfg.quiet, cfg.csv, cfg.loop, cfg.idle, cfg.showErrs = c.Bool("q"), c.Bool("csv"), c.Bool("l"), c.Bool("I"), c.Bool("e")
	// --precision is HdrHistogram's significant digits: redis-benchmark
	// takes a negative value as its default 3 and caps it at 4.
	cfg.precision = c.Int("precision")
	if cfg.precision < 0 {
		cfg.precision = 3
	}
	cfg.precision = min(max(cfg.precision, 1), 4)
	cfg.seed = c.Uint64("seed")
	if !c.IsSet("seed") {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	cfg.threads = min(max(c.Int("threads"), 0), 500)
	if c.Int("threads") > 500 {
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
	trailing := c.Args().Slice()
	if c.Bool("x") {
		if len(trailing) == 0 {
			return nil, usageErrorf("-x reads the last argument from stdin: give a command")
		}
		b, err := io.ReadAll(bufio.NewReader(stdin))
		if err != nil {
			return nil, failed(fmt.Errorf("read stdin: %w", err))
		}
		trailing = append(trailing, string(b))
	}
	if len(trailing) > 0 && c.IsSet("t") {
		cfg.warnings = append(cfg.warnings, "WARNING: Option -t is ignored.")
		if err := c.Set("t", ""); err != nil {
			return nil, failed(err)
		}
	}
	if cfg.work, err = parseWorkload(c, cfg.sizes, "", trailing); err != nil {
		return nil, err
	}
	if cfg.keepAlive == 0 {
		cfg.warnings = append(cfg.warnings, "WARNING: Keepalive disabled. You probably need "+
			"'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux and "+
			"'sudo sysctl -w net.inet.tcp.msl=1000' for Mac OS X in order "+
			"to use a lot of clients/requests")
	}
	if c.IsSet("slo") {
		var err error
		if cfg.slo, err = report.ParseSLO(c.String("slo")); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	cfg.jsonPath = c.String("json")
	if cfg.jsonPath != "" {
		if err := checkOutputPath(cfg.jsonPath); err != nil {
			return nil, usageErrorf("--json: %v", err)
		}
	}
	return cfg, nil
}

// applyURI reads redis-benchmark's -u redis://[user:password@]host[:port][/db].
func applyURI(o *conn.Options, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return usageErrorf("-u %q: want redis://[user:password@]host[:port][/db]", s)
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		return usageErrorf("-u %q: TLS (rediss://) is not supported yet", s)
	default:
		return usageErrorf("-u %q: want the redis:// scheme", s)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6379"
	}
	o.Network, o.Addr = "tcp", net.JoinHostPort(host, port)
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			o.User, o.Password = u.User.Username(), pw
		} else {
			o.Password = u.User.Username() // redis://password@host
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return usageErrorf("-u %q: bad database number %q", s, db)
		}
		o.DB = n
	}
	return nil
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
	cfg, err := parseBenchConfig(c, os.Stdin)
	if err != nil {
		return err
	}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	for _, w := range cfg.warnings {
		fmt.Fprintln(stderr, w)
	}
	jobs := cfg.work.tests
	_, stopEmbedded, err := startEmbedded(c, &cfg.target, stderr)
	if err != nil {
		return err
	}
	defer stopEmbedded()
	ctx := c.Context
	out := stdout
	if cfg.jsonPath == "-" {
		out = stderr
	}
	info := report.BenchInfo{Clients: cfg.clients, KeepAlive: cfg.keepAlive, Threads: cfg.threads}
	info.Save, info.AppendOnly, info.HaveConfig = serverConfig(ctx, cfg.target)
	if !info.HaveConfig {
		fmt.Fprintln(stderr, "WARNING: Could not fetch server CONFIG")
	}
	if cfg.idle {
		return benchIdle(ctx, cfg, out)
	}
	doc := &report.Document{
		Schema: report.Schema, Mode: "closed", Tool: report.Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339), Config: cfg.echo(), Tests: []report.Test{},
	}
	writeDoc := func() error {
		if cfg.jsonPath == "" {
			return nil
		}
		return writeJSON(stdout, cfg.jsonPath, doc)
	}
	if cfg.csv {
		if err := report.BenchCSVHeader(out); err != nil {
			return failed(err)
		}
	}
	errPrinter := newErrorPrinter(redactingWriter(ctx, out))
	progress := term.IsTerminal(fdOf(out)) && !cfg.csv
	sloFailed := false
	code := exitOK
	for round := 0; ; round++ {
		for i, j := range jobs {
			info.DataSize = cfg.payload(j)
			res, runErr := cfg.runOne(ctx, j, round*len(jobs)+i, out, stderr, progress, info, errPrinter)
			redactResult(ctx, res)
			if res != nil {
				t, jerr := report.FromResult(res)
				if jerr != nil {
					return failed(jerr)
				}
				t.Name = cfg.title(j)
				if t.SLO = cfg.slo.Check(res); t.SLO != nil {
					fmt.Fprintf(stderr, "%s: %s\n", t.Name, t.SLO.Line())
					if !t.SLO.Pass {
						sloFailed = true
					}
				}
				doc.Tests = append(doc.Tests, t)
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
				return exitCode(exitInterrupted)
			}
			code = worst(code, judge(stderr, res))
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
	if sloFailed {
		code = worst(code, exitSLO)
	}
	if code != exitOK {
		return exitCode(code)
	}
	return nil
}

// runOne dials, runs and reports one test.
func (cfg *benchConfig) runOne(ctx context.Context, j workTest, n int, out, stderr io.Writer, progress bool, info report.BenchInfo, errs *errorPrinter) (*scheduler.Result, error) {
	conns, err := dialBench(ctx, cfg.target, cfg.clients, stderr)
	if err != nil {
		return nil, err
	}
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
		Commands: func(i int) scheduler.Commands {
			s, err := cfg.work.stream(j, cfg.seed+uint64(n)*1_000_003+uint64(i))
			if err != nil {
				templateErr = err
			}
			return s
		},
		ContinueOnError: cfg.showErrs,
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
	res, runErr := scheduler.RunClosed(ctx, conns, ccfg)
	stopProgress()
	if templateErr != nil {
		return nil, usageErrorf("command: %v", templateErr)
	}
	if runErr != nil {
		var er *scheduler.ErrorReply
		var lost *scheduler.ErrConnLost
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
		err = report.BenchCSV(out, title, res)
	case cfg.quiet:
		err = report.BenchQuiet(out, title, res, last)
		if err == nil {
			err = report.BenchCommands(out, res, true)
		}
	default:
		err = report.BenchFull(out, title, res, info, last)
		if err == nil {
			err = report.BenchCommands(out, res, false)
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

// liveConns drops the connections that could not be opened.
func liveConns(all []*conn.Conn) []*conn.Conn {
	out := all[:0]
	for _, c := range all {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// serverConfig reads CONFIG GET save and appendonly, as redis-benchmark's
// header shows them.
func serverConfig(ctx context.Context, o conn.Options) (save, aof string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	o.DB, o.ClientTracking, o.RESP3 = 0, false, false
	get := func(name string) (string, bool) {
		v, err := conn.Do(ctx, o, "CONFIG", "GET", name)
		if err != nil {
			return "", false
		}
		if len(v.Elems) >= 2 {
			return v.Elems[1].Str, true
		}
		return "", false
	}
	save, ok1 := get("save")
	aof, ok2 := get("appendonly")
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

func (cfg *benchConfig) echo() map[string]any {
	m := map[string]any{
		"target": cfg.target.Addr, "clients": cfg.clients, "requests": cfg.requests,
		"data_size": cfg.sizes.String(), "pipeline": cfg.pipeline, "keepalive": cfg.keepAlive,
		"keyspace": cfg.work.opts.Keyspace, "random_keys": cfg.work.opts.Random, "key_dist": cfg.work.keys.String(), "seed": cfg.seed,
		"precision": cfg.precision, "threads": cfg.threads,
		"latency": map[scheduler.LatencyMode]string{scheduler.FirstReply: "first-reply", scheduler.PerReply: "per-reply"}[cfg.latency],
	}
	if !cfg.rate.IsZero() {
		m["rate"] = cfg.rate.PerSecond()
	}
	if len(cfg.work.tests) == 1 && (cfg.work.tests[0].custom || cfg.work.mixed) {
		m["command"] = cfg.work.tests[0].title
	}
	return m
}

// errorPrinter shows error replies on stdout, at most one per second, as
// redis-benchmark 6 did with -e.
type errorPrinter struct {
	out  io.Writer
	last chan int64
}

func newErrorPrinter(out io.Writer) *errorPrinter {
	p := &errorPrinter{out: out, last: make(chan int64, 1)}
	p.last <- 0
	return p
}

func (p *errorPrinter) print(text []byte) {
	now := time.Now().Unix()
	last := <-p.last
	if now != last {
		fmt.Fprintf(p.out, "Error from server: %s\n", text)
		last = now
	}
	p.last <- last
}

// fdOf returns the file descriptor behind w, or -1.
func fdOf(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		return int(f.Fd())
	}
	return -1
}
