package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
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
		pacingFlag(),
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
	flags = append(append(flags, embeddedFlags()...), clusterFlags()...)
	return withHelp(&cli.Command{
		Name:      "compare",
		Usage:     "run the same workload closed-loop and open-loop and show what the closed loop hides",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     flags,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Action: compareAction,
	},
		"pacer compare --embedded --stall 100ms --every 1s",
		"pacer compare -h 10.0.0.5 -t set -d 100 --rate 20k --duration 30s --json compare.json",
	)
}

type compareConfig struct {
	metrics  *liveMetrics
	target   conn.Options
	tls      *handshakes // nil over plain TCP
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
	shard       shardConfig
	closedConns int
	// cluster is --cluster: the closed loop spreads -c over the primaries
	// as bench --cluster does, the open loop opens ceil(c/N) to each.
	cluster bool
	keys    []cluster.KeySpec
	tagged  []bool
}

func parseCompareConfig(c *cli.Context) (*compareConfig, error) {
	cfg := &compareConfig{}
	var err error
	if cfg.target, err = target(c); err != nil {
		return nil, err
	}
	cfg.tls = watchTLS(&cfg.target)
	if cfg.shard, err = parseShard(c, os.LookupEnv, time.Now()); err != nil {
		return nil, err
	}
	if cfg.conns, err = parseConns(c); err != nil {
		return nil, err
	}
	cfg.closedConns = cfg.conns
	if cfg.shard.sharded() {
		if !c.IsSet("rate") {
			return nil, usageErrorf("--shard needs --rate: without it each shard would take its open rates from its own closed loop's throughput, and the shards would send different timelines")
		}
		// The closed loop has no timeline to share: its load is its
		// clients, so the shards split -c (shard K takes every N-th).
		if cfg.closedConns = shareOf(cfg.conns, cfg.shard.k, cfg.shard.n); cfg.closedConns == 0 {
			return nil, usageErrorf("--shard %d/%d: -c %d leaves this shard no closed-loop client; give at least -c %d", cfg.shard.k, cfg.shard.n, cfg.conns, cfg.shard.n)
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
	switch cfg.arrival = c.String("arrival"); cfg.arrival {
	case "uniform", "poisson":
	default:
		return nil, usageErrorf("--arrival %q: want uniform or poisson", cfg.arrival)
	}
	var ok bool
	if cfg.pacing, ok = scheduler.ParsePacing(c.String("pacing")); !ok {
		return nil, usageErrorf("--pacing %q: want auto, precise or coarse", c.String("pacing"))
	}
	if cfg.drain = c.Duration("drain"); cfg.drain < 0 {
		return nil, usageErrorf("--drain %s: must not be negative", cfg.drain)
	}
	if cfg.drain == 0 {
		cfg.drain = time.Nanosecond // zero would mean the default
	}
	if cfg.timeout = c.Duration("timeout"); cfg.timeout < 0 || (c.IsSet("timeout") && cfg.timeout == 0) {
		return nil, usageErrorf("--timeout %s: want a positive duration", cfg.timeout)
	}
	if cfg.target.MaxBuffer, err = parseMaxBuffer(c); err != nil {
		return nil, err
	}
	cfg.seed = parseSeed(c)
	if cfg.output, err = parseOutput(c); err != nil {
		return nil, err
	}
	cfg.quiet, cfg.jsonPath = cfg.output.quiet, cfg.output.jsonPath
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

// clusterCheck reads where the test's keys are; the closed loop sends each
// connection's requests to one primary, so every key needs redis-benchmark's
// {tag} (the catalogue's have it).
func (cfg *compareConfig) clusterCheck(ctx context.Context) error {
	var err error
	if cfg.keys, cfg.tagged, err = clusterKeys(ctx, cfg.target, cfg.test.recipe); err != nil {
		return err
	}
	return needTags(cfg.test.recipe, cfg.keys, cfg.tagged, "compare --cluster")
}

func compareAction(c *cli.Context) error {
	cfg, err := parseCompareConfig(c)
	if err != nil {
		return err
	}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	if cfg.metrics, err = startMetrics(c); err != nil {
		return err
	}
	defer cfg.metrics.close()
	emb, stopEmbedded, err := startEmbedded(c, &cfg.target, nil)
	if err != nil {
		return err
	}
	defer stopEmbedded()
	cfg.metrics.announce(stderr)
	out := stdout
	if cfg.output.files.stdout() {
		out = stderr
	}
	where := cfg.target.Addr
	if emb != nil {
		where = fmt.Sprintf("embedded target (%s)", emb.Faults())
	}
	ctx := c.Context
	if cfg.cluster {
		if err := cfg.clusterCheck(ctx); err != nil {
			return err
		}
	}
	srvSide := askServer(ctx, cfg.target, stderr)
	srvSide.noteConfig()
	fmt.Fprintf(out, "pacer compare: %s, %d connections, closed-loop pipeline %d, %s per run, %s\n",
		cfg.title, cfg.conns, cfg.pipeline, cfg.duration, where)
	if srvSide.id.Available {
		fmt.Fprintln(out, report.ServerLine(srvSide.id))
	}
	fmt.Fprintln(out)

	doc := &report.Document{Schema: report.Schema, Mode: "mixed", Tool: report.Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339), Config: cfg.echo(ctx, faultsOf(emb)), Tests: []report.Test{},
		Server: srvSide.id}
	cfg.shard.document(doc)
	var runs []compareRun
	finish := func(runErr error) error {
		code := exitOK
		slos := make([]*report.SLOResult, len(runs))
		for i, r := range runs {
			redactResult(ctx, r.res)
			if r.res.Mode == "open" {
				// The SLO judges the open loop: the closed loop's numbers
				// are the ones that hide queueing.
				var err error
				if slos[i], err = cfg.output.slo.Check(r.res); err != nil {
					return failed(err)
				}
			}
			// The verdict is the trust rule's, before anything is shown.
			j := report.Judge(r.res, slos[i])
			r.res.Verdict, r.res.VerdictReason = j.Verdict, j.Reason
			t, err := report.FromResult(r.res)
			if err != nil {
				return failed(err)
			}
			// Every run has the test's ID: mode and target_rate tell them apart.
			t.ID, t.Name = cfg.test.id(), r.label
			t.Server = r.server
			t.SLO = slos[i]
			doc.Tests = append(doc.Tests, t)
		}
		doc.Interrupted = ctx.Err() != nil
		// Results reach the file before anything reaches stdout.
		if cfg.output.files.any() {
			if err := cfg.output.files.write(stdout, doc); err != nil {
				return failed(err)
			}
		}
		if len(runs) > 0 {
			if err := renderCompare(out, cfg, runs); err != nil {
				return failed(err)
			}
		}
		for _, t := range doc.Tests {
			if t.SLO != nil {
				for _, l := range t.SLO.Lines() {
					fmt.Fprintf(out, "%s: %s\n", t.Name, l)
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
		for i, r := range runs {
			code = worst(code, judge(stderr, r.res, slos[i]))
		}
		if code != exitOK {
			return exitCode(code)
		}
		return nil
	}

	closed, st, err := cfg.runClosed(ctx, stderr, srvSide)
	if closed != nil {
		runs = append(runs, compareRun{label: closedRunLabel(cfg.title), res: closed, server: st})
	}
	if err != nil || ctx.Err() != nil {
		return finish(err)
	}
	rates := []scheduler.Rate{cfg.rate}
	fractions := []float64{0}
	if cfg.rate.IsZero() {
		rates, fractions = nil, nil
		for _, f := range compareFractions {
			r := roundRate(closed.AchievedRate() * f)
			if r.IsZero() {
				return finish(failed(fmt.Errorf("the closed loop completed %d requests: no throughput to take a fraction of", closed.Counts.Completed)))
			}
			rates, fractions = append(rates, r), append(fractions, f)
		}
	}
	for i, rate := range rates {
		res, st, err := cfg.runOpen(ctx, rate, i, stderr, srvSide)
		if res != nil {
			label := openRunLabel(cfg.title, rate)
			runs = append(runs, compareRun{label: label, res: res, fraction: fractions[i], server: st})
		}
		if err != nil || ctx.Err() != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

// closedRunLabel and openRunLabel name compare's runs, in the JSON and
// the metrics.
func closedRunLabel(title string) string { return title + " (closed loop)" }

func openRunLabel(title string, rate scheduler.Rate) string {
	return fmt.Sprintf("%s (open loop at %s req/s)", title, rate)
}

type compareRun struct {
	label    string
	res      *scheduler.Result
	fraction float64 // of the closed throughput, 0 when --rate was given
	server   *serverinfo.Stats
}

// roundRate keeps three significant digits, so rates read well.
func roundRate(perSec float64) scheduler.Rate {
	if perSec <= 0 {
		return scheduler.Rate{}
	}
	p := math.Pow(10, math.Floor(math.Log10(perSec))-2)
	return scheduler.RatePerSecond(math.Round(perSec/p) * p)
}

// shareOf is shard k's (from 1) share of n clients: every N-th of them,
// from the k-th.
func shareOf(n, k, shards int) int {
	if k > n {
		return 0
	}
	return (n-k)/shards + 1
}

func (cfg *compareConfig) runClosed(ctx context.Context, stderr io.Writer, srv *serverSide) (*scheduler.Result, *serverinfo.Stats, error) {
	if err := cfg.shard.wait(ctx, stderr, cfg.quiet); err != nil {
		return nil, nil, nil // interrupted while waiting: ctx says so
	}
	cfg.tls.take() // the run's own handshakes only
	if cfg.cluster {
		bc, err := discoverCluster(ctx, cfg.target, stderr, false)
		if err != nil {
			return nil, nil, err
		}
		conns, of, err := bc.dial(ctx, cfg.closedConns, stderr)
		if err != nil {
			return nil, nil, failed(err)
		}
		if err := cfg.shard.sleepUntil(ctx); err != nil {
			closeAll(conns)
			return nil, nil, nil
		}
		res, err := cfg.runClosedOn(ctx, conns, stderr, bc.closed(of, cfg.seed))
		bc.wait()
		cfg.shard.started(res)
		cfg.shard.next(scheduler.Uniform{}, cfg.duration, 0, scheduler.DefaultDrain)
		if res != nil {
			res.TLS = cfg.tls.take()
		}
		return res, nil, err // the seed's counters are not the cluster's
	}
	conns, err := dialPool(ctx, cfg.target, cfg.closedConns, stderr)
	if err != nil {
		return nil, nil, failed(err)
	}
	before := srv.before()
	// A closed loop has no timeline to start at an instant: it starts
	// when the planned instant comes.
	if err := cfg.shard.sleepUntil(ctx); err != nil {
		closeAll(conns)
		return nil, nil, nil
	}
	res, err := cfg.runClosedOn(ctx, liveConns(conns), stderr, nil)
	cfg.shard.started(res)
	cfg.shard.next(scheduler.Uniform{}, cfg.duration, 0, scheduler.DefaultDrain)
	if res == nil {
		return nil, nil, err
	}
	res.TLS = cfg.tls.take()
	return res, srv.since(before), err
}

func (cfg *compareConfig) runClosedOn(ctx context.Context, conns []*conn.Conn, stderr io.Writer, cl *scheduler.ClosedCluster) (*scheduler.Result, error) {
	var tplErr error
	live := make(chan *scheduler.Live, 1)
	stop := cfg.progress(stderr, "closed", live)
	onStart, endMetrics := cfg.metrics.hook(closedRunLabel(cfg.title), metrics.ModeClosed, func(l *scheduler.Live) { live <- l })
	res, err := scheduler.RunClosed(ctx, conns, scheduler.ClosedConfig{
		Name: cfg.title, Duration: cfg.duration, Pipeline: cfg.pipeline, ContinueOnError: true,
		CommandNames: cfg.test.names, Interval: cfg.output.interval,
		NewCommands: func(i int) scheduler.Commands {
			s, err := cfg.work.stream(cfg.test, cfg.seed+uint64(i))
			if err != nil {
				tplErr = err
			}
			return s
		},
		OnStart:      onStart,
		OnErrorReply: errorsTo(stderr, cfg.output.showErrs),
		Cluster:      cl,
	})
	endMetrics()
	stop()
	if tplErr != nil {
		return nil, usageErrorf("command: %v", tplErr)
	}
	if err != nil {
		return res, failed(err)
	}
	return res, nil
}

func (cfg *compareConfig) runOpen(ctx context.Context, rate scheduler.Rate, i int, stderr io.Writer, srv *serverSide) (*scheduler.Result, *serverinfo.Stats, error) {
	stream, err := cfg.work.stream(cfg.test, cfg.shard.streamSeed(cfg.seed+uint64(1000+i)))
	if err != nil {
		return nil, nil, usageErrorf("command: %v", err)
	}
	if err := cfg.shard.wait(ctx, stderr, cfg.quiet); err != nil {
		return nil, nil, nil // interrupted while waiting: ctx says so
	}
	cfg.tls.take() // the run's own handshakes only
	if cfg.cluster {
		top, err := discover(ctx, cfg.target)
		if err != nil {
			return nil, nil, failed(err)
		}
		n := 0
		for k := range top.Primaries {
			if top.SlotsOf(k) > 0 {
				n++
			}
		}
		cl, err := dialCluster(ctx, cfg.target, (cfg.conns+max(n, 1)-1)/max(n, 1), stderr)
		if err != nil {
			return nil, nil, failed(err)
		}
		cl.cfg.Keys, cl.cfg.Tagged = cfg.keys, cfg.tagged
		res, err := cfg.runOpenOn(ctx, cl.conns, stream, rate, i, stderr, cl.cfg)
		if res != nil {
			res.TLS = cfg.tls.take()
		}
		return res, nil, err
	}
	conns, err := dialPool(ctx, cfg.target, cfg.conns, stderr)
	if err != nil {
		return nil, nil, failed(err)
	}
	before := srv.before()
	res, err := cfg.runOpenOn(ctx, conns, stream, rate, i, stderr, nil)
	if res == nil {
		return nil, nil, err
	}
	res.TLS = cfg.tls.take()
	return res, srv.since(before), err
}

func (cfg *compareConfig) runOpenOn(ctx context.Context, conns []*conn.Conn, stream scheduler.Commands, rate scheduler.Rate, i int, stderr io.Writer, oc *scheduler.OpenCluster) (*scheduler.Result, error) {
	var tl scheduler.Timeline = scheduler.Uniform{Rate: rate}
	if cfg.arrival == "poisson" {
		tl = scheduler.NewPoisson(rate, cfg.seed+uint64(i))
	}
	whole := tl
	tl, err := cfg.shard.timeline(tl)
	if err != nil {
		closeAll(conns)
		return nil, usageErrorf("--shard: %v", err)
	}
	defer cfg.shard.next(whole, cfg.duration, 0, cfg.drain)
	live, connCh := make(chan *scheduler.Live, 1), make(chan *scheduler.Live, 1)
	stop := cfg.progress(stderr, fmt.Sprintf("open %s/s", rate), live)
	stopConns := watchConnections(stderr, fmt.Sprintf("%s (open loop at %s req/s)", cfg.title, rate), connCh)
	onStart, endMetrics := cfg.metrics.hook(openRunLabel(cfg.title, rate), metrics.ModeOpen, func(l *scheduler.Live) { live <- l; connCh <- l })
	res, err := scheduler.RunOpen(ctx, conns, stream, scheduler.OpenConfig{
		Name: cfg.title, Timeline: tl, Rate: rate, Duration: cfg.duration, Pacing: cfg.pacing, Drain: cfg.drain,
		LagLimit:     sloLagLimit(cfg.pacing, cfg.output.slo),
		Start:        cfg.shard.instant(),
		CommandNames: cfg.test.names, Interval: cfg.output.interval,
		Timeout:      cfg.timeout,
		OnStart:      onStart,
		OnErrorReply: errorsTo(stderr, cfg.output.showErrs),
		Redial: func(ctx context.Context) (*conn.Conn, error) {
			return conn.Dial(ctx, cfg.target)
		},
		Cluster: oc,
	})
	endMetrics()
	stop()
	stopConns()
	cfg.shard.started(res)
	if err != nil {
		return res, failed(err)
	}
	return res, nil
}

func (cfg *compareConfig) progress(stderr io.Writer, label string, live chan *scheduler.Live) func() {
	if cfg.quiet {
		return func() {}
	}
	return newProgress(stderr).watch(label, live)
}

func (cfg *compareConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{"arrival": cfg.arrival, "max_buffer": cfg.target.MaxBuffer, "pacing": cfg.pacing.String(), "test": cfg.title}
	if cfg.work.mixed || cfg.test.custom {
		extra["command"] = cfg.title
	}
	return commonConfig{
		target: cfg.target.Addr, embedded: faults, conns: cfg.conns, pipeline: cfg.pipeline, dial: cfg.target,
		sizes: cfg.work.opts.Sizes, keyspace: cfg.work.opts.Keyspace, keyDist: cfg.work.keys,
		seed: cfg.seed, tests: testIDs(cfg.work), rate: cfg.rate, duration: cfg.duration,
	}.echo(ctx, extra)
}

// renderCompare prints the side-by-side table and the reading of the gap.
func renderCompare(w io.Writer, cfg *compareConfig, runs []compareRun) error {
	var b strings.Builder
	closed := runs[0].res
	open := runs[1:]
	const first, col = 22, 13
	// Header: one column for the closed loop, two (service, response) per open run.
	fmt.Fprintf(&b, "%-*s%*s", first, "", col, "closed loop")
	for _, r := range open {
		h := fmt.Sprintf("open loop at %s/s", r.res.TargetRate)
		if r.fraction > 0 {
			h += fmt.Sprintf(" (%.0f%%)", r.fraction*100)
		}
		fmt.Fprintf(&b, "  %*s", 2*col, h)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*s", first, "latency (ms)", col, "from send")
	for range open {
		fmt.Fprintf(&b, "  %*s%*s", col, "service", col, "response")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*.0f", first, "throughput (req/s)", col, closed.AchievedRate())
	for _, r := range open {
		fmt.Fprintf(&b, "  %*.0f%*s", col, r.res.AchievedRate(), col, "")
	}
	b.WriteString("\n")
	cs := histo.Summarize(closed.Response)
	row := func(name string, pick func(histo.Summary) float64) {
		fmt.Fprintf(&b, "%-*s%*.3f", first, name, col, pick(cs))
		for _, r := range open {
			fmt.Fprintf(&b, "  %*.3f%*.3f", col, pick(histo.Summarize(r.res.Service)), col, pick(histo.Summarize(r.res.Response)))
		}
		b.WriteString("\n")
	}
	var ps []float64
	if cfg != nil { // nil: pacer report re-rendering a saved comparison
		ps = cfg.output.text.Percentiles
	}
	if len(ps) > 0 {
		// The chosen percentiles: one row each, from the histograms.
		cv := report.PercentileMillis(closed.Response, ps)
		sv, rv := make([][]float64, len(open)), make([][]float64, len(open))
		for j, r := range open {
			sv[j], rv[j] = report.PercentileMillis(r.res.Service, ps), report.PercentileMillis(r.res.Response, ps)
		}
		for i, p := range ps {
			fmt.Fprintf(&b, "%-*s%*.3f", first, report.PercentileLabel(p), col, cv[i])
			for j := range open {
				fmt.Fprintf(&b, "  %*.3f%*.3f", col, sv[j][i], col, rv[j][i])
			}
			b.WriteString("\n")
		}
	} else {
		row("p50", func(s histo.Summary) float64 { return s.P50 })
		row("p90", func(s histo.Summary) float64 { return s.P90 })
		row("p99", func(s histo.Summary) float64 { return s.P99 })
		row("p99.9", func(s histo.Summary) float64 { return s.P999 })
	}
	row("max", func(s histo.Summary) float64 { return s.Max })
	// The server's side and the network: one value per run, in the
	// closed column and under each open run's service time.
	cells := func(name string, pick func(compareRun) string) {
		fmt.Fprintf(&b, "%-*s%*s", first, name, col, pick(runs[0]))
		for _, r := range open {
			fmt.Fprintf(&b, "  %*s%*s", col, pick(r), col, "")
		}
		b.WriteString("\n")
	}
	haveServer, haveBytes, haveTLS := false, false, ""
	for _, r := range runs {
		haveServer = haveServer || r.server != nil && r.server.Total().Calls > 0
		haveBytes = haveBytes || r.res.BytesSent+r.res.BytesReceived > 0
		if t := r.res.TLS; t != nil && haveTLS == "" {
			haveTLS = strings.TrimSpace(safetext.Escape(t.Version + " " + t.CipherSuite))
		}
	}
	if haveServer {
		cells("server per call (µs)", func(r compareRun) string {
			if t := r.server.Total(); t.Calls > 0 {
				return strconv.FormatFloat(t.UsecPerCall, 'f', 2, 64)
			}
			return "-"
		})
		cells("server p99 ≤ (µs)", func(r compareRun) string {
			if h := r.server.Total().LatencyHistogram; h != nil && h.Calls > 0 {
				return strconv.FormatUint(h.Percentile(99), 10)
			}
			return "-"
		})
	}
	if haveBytes {
		cells("network out", func(r compareRun) string { return bitsPerSecond(r.res, r.res.BytesSent) })
		cells("network in", func(r compareRun) string { return bitsPerSecond(r.res, r.res.BytesReceived) })
	}
	if haveTLS != "" {
		handshake := func(q float64) func(compareRun) string {
			return func(r compareRun) string {
				if t := r.res.TLS; t != nil && t.Time != nil && t.Time.TotalCount() > 0 {
					return strconv.FormatFloat(histo.Millis(t.Time.ValueAtPercentile(q)), 'f', 3, 64)
				}
				return "-"
			}
		}
		cells("tls handshake p50 (ms)", handshake(50))
		cells("tls handshake max (ms)", handshake(100))
	}
	fmt.Fprintf(&b, "%-*s%*d", first, "completed", col, closed.Counts.Completed)
	for _, r := range open {
		fmt.Fprintf(&b, "  %*d%*s", col, r.res.Counts.Completed, col, "")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*d", first, "errors+timeouts+unsent", col, closed.Counts.Errors+closed.Counts.Timeouts+closed.Counts.Unsent)
	for _, r := range open {
		c := r.res.Counts
		fmt.Fprintf(&b, "  %*d%*s", col, c.Errors+c.Timeouts+c.Unsent, col, "")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*s", first, "verdict", col, "-")
	for _, r := range open {
		fmt.Fprintf(&b, "  %*s%*s", col, r.res.Verdict, col, "")
	}
	b.WriteString("\n")
	if haveServer {
		b.WriteString("server: INFO commandstats per call over each run (every client of the server); p99 ≤ is the bound of LATENCY HISTOGRAM's power-of-two bucket\n")
	}
	if haveBytes {
		b.WriteString("network: bytes written to and read from the sockets per second of each run, in bits (1 Mbit/s = 10^6 bit/s)\n")
	}
	if haveTLS != "" {
		fmt.Fprintf(&b, "tls: %s; each run's connections' handshakes, counted in no latency\n", haveTLS)
	}
	b.WriteString("\n")
	if len(open) > 0 {
		b.WriteString(reading(closed, pickRun(open)) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pickRun chooses the open run the reading talks about: the fastest one
// the generator kept up with, else the first.
func pickRun(open []compareRun) compareRun {
	best := -1
	for i, r := range open {
		if r.res.Verdict == scheduler.VerdictOK && (best < 0 || r.res.TargetRate.PerSecond() > open[best].res.TargetRate.PerSecond()) {
			best = i
		}
	}
	if best < 0 {
		best = 0
	}
	return open[best]
}

// Comparable rates: above compareMaxShare of the closed loop's throughput
// the open loop overloads the server, and its queueing is overload, not
// what the closed loop hides: no conclusion. Below compareMinShare the two
// loops measure different loads: a far higher open-loop p99 still shows
// what the closed loop hides (a lighter load, more latency), but agreement
// means nothing.
const (
	compareMinShare = 0.5
	compareMaxShare = 1.05
)

// reading is the one-sentence interpretation of the gap between the
// closed loop's p99 and the open loop's response p99. It states the rates
// compared and concludes only when both runs are trustworthy (verdict ok)
// and comparable (see compareMinShare).
func reading(closed *scheduler.Result, r compareRun) string {
	cp := histo.Summarize(closed.Response).P99
	op := histo.Summarize(r.res.Response).P99
	cr, or := closed.AchievedRate(), r.res.TargetRate.PerSecond()
	share := 0.0
	if cr > 0 {
		share = or / cr
	}
	s := fmt.Sprintf("Closed loop at %.0f req/s (its own pace) against open loop at %s req/s (%.0f%% of it)", cr, r.res.TargetRate, 100*share)
	switch {
	case closed.Verdict != scheduler.VerdictOK:
		return s + ": no conclusion, the closed run is not trustworthy (" + closed.Verdict + ": " + closed.VerdictReason + ")."
	case r.res.Verdict != scheduler.VerdictOK:
		return s + ": no conclusion, the open run is not trustworthy (" + r.res.Verdict + ": " + r.res.VerdictReason + ")."
	case share > compareMaxShare:
		return s + fmt.Sprintf(": no conclusion, the open loop offered more than the closed loop's throughput, so its response p99 (%.3f ms against %.3f ms) shows overload, not hidden queueing.", op, cp)
	case op > 2*cp && op-cp > 1:
		// A lighter load with a far higher p99: whatever the share.
		return s + fmt.Sprintf(": the closed-loop p99 (%.3f ms) hides %.1f ms of queueing, the open loop's response p99 is %.1f ms — coordinated omission.", cp, op-cp, op)
	case share < compareMinShare:
		return s + fmt.Sprintf(": no conclusion, the loads are too far apart to compare (response p99 %.3f ms against the closed loop's %.3f ms); run the open loop nearer the closed loop's throughput (--rate).", op, cp)
	}
	return s + fmt.Sprintf(": response p99 %.3f ms against the closed loop's %.3f ms — no hidden queueing at this rate.", op, cp)
}

// bitsPerSecond is n bytes over r's window as a bit rate ("3.28 Gbit/s"),
// or "-".
func bitsPerSecond(r *scheduler.Result, n uint64) string {
	if secs := r.Window.Seconds(); secs > 0 {
		return report.BitRate(float64(n) / secs)
	}
	return "-"
}
