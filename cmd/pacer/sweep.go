package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
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

// Limits of `pacer sweep`.
const (
	// maxSweepPoints bounds the points of a sweep (rates, or clients ×
	// pipelines).
	maxSweepPoints = 1000
	// defaultMaxSteps is --max-steps: the points a search may measure.
	defaultMaxSteps = 12
	// defaultSearchFrom is where a search starts without --from.
	defaultSearchFrom = "1k"
	// minAbortAfter is the shortest default --abort-after: 10× a tight
	// latency bound would otherwise cut a step at a single scheduling
	// hiccup of the machine, which the SLO itself may well survive.
	minAbortAfter = 100 * time.Millisecond
)

func sweepCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.StringFlag{Name: "rates", Usage: "open sweep: the target `RATES`, comma-separated: 10k,20k,40k", Category: catLoad},
		&cli.StringFlag{Name: "from", Usage: "open sweep: the first `RATE` (with --to and --step; --search starts there)", DefaultText: defaultSearchFrom + " with --search", Category: catLoad},
		&cli.StringFlag{Name: "to", Usage: "open sweep: the last `RATE` (--search: the highest it tries)", Category: catLoad},
		&cli.StringFlag{Name: "step", Usage: "open sweep: go from --from to --to by `RATE`", Category: catLoad},
		&cli.DurationFlag{Name: "step-duration", Value: 5 * time.Second, Usage: "measure each step (closed: each point) for `DURATION`", Category: catLoad},
		&cli.DurationFlag{Name: "settle", Value: time.Second, Usage: "open sweep: send each step's rate for `DURATION` before measuring it (sent, not measured)", Category: catLoad},
		&cli.BoolFlag{Name: "search", Usage: "find the highest rate that meets --slo: grow ×4 from --from until a step fails, then bisect to --precision", Category: catLoad},
		&cli.StringFlag{Name: "precision", Value: "5%", Usage: "--search stops when the failing rate is within `SHARE` above the passing one", Category: catLoad},
		&cli.IntFlag{Name: "max-steps", Value: defaultMaxSteps, Usage: "--search measures at most `N` points", Category: catLoad},
		&cli.DurationFlag{Name: "abort-after", Usage: "stop a step (and fail it) once its oldest unanswered request has waited `DURATION` since its intended time; 0: never", DefaultText: "10× the --slo latency bound, at least 100ms; 1s without one", Category: catLoad},
		&cli.BoolFlag{Name: "closed", Usage: "closed sweep: the bench loop at each -c × -P point, with Little's law and the knee", Category: catLoad},
		&cli.StringFlag{Name: "c", Value: "50", Usage: "`N` connections (at most 10000); --closed: a list, 10,50,100,200", Category: catLoad},
		&cli.StringFlag{Name: "P", Value: "1", Usage: "--closed: pipeline `LIST` of batch sizes, 1,16,64", Category: catLoad},
		repeatFlag(),
		arrivalFlag(),
		seedFlag("seeds poisson arrivals and random keys (the JSON records it)"),
		pacingFlag(),
		maxInflightFlag(),
		maxBufferFlag(),
		drainFlag(),
		timeoutFlag(),
		&cli.DurationFlag{Name: "max-backlog", Value: scheduler.DefaultMaxBacklog, Usage: "a request more than `DURATION` late when its turn comes is counted unsent instead of sent", Category: catLoad},
		&cli.DurationFlag{Name: "lag-limit", Usage: "send-lag p99 `DURATION` above which a step's verdict is generator_behind; with --pacing auto it sets the wake quantum", DefaultText: "1ms auto and precise, 2ms coarse; at most half the tightest --slo latency bound", Category: catLoad},
	)
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
	flags = append(flags, ciFlag())
	flags = append(append(flags, embeddedFlags()...), clusterFlags()...)
	return withHelp(&cli.Command{
		Name:      "sweep",
		Usage:     "step the load: open rates (or --search the highest that meets --slo), or closed -c × -P points",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     flags,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Action: sweepAction,
	},
		"pacer sweep --embedded --delay exp:100us --search --slo 'p99<=1ms' --step-duration 1s --settle 250ms",
		"pacer sweep -h 10.0.0.5 --closed -c 1,5,10,50,200 --step-duration 5s -t get",
	)
}

// sweepConfig is a validated `pacer sweep`.
type sweepConfig struct {
	target     conn.Options
	closed     bool
	conns      int   // open
	clients    []int // closed
	pipelines  []int // closed
	rates      []float64
	search     bool
	from, to   float64
	precision  float64
	maxSteps   int
	stepDur    time.Duration
	settle     time.Duration
	abortAfter time.Duration
	arrival    string
	seed       uint64
	pacing     scheduler.Pacing
	drain      time.Duration
	lagLimit   time.Duration
	timeout    time.Duration
	backlog    time.Duration
	interval   time.Duration
	showErrs   bool
	slo        report.SLO
	sloSet     bool
	quiet      bool
	files      resultFiles
	tls        *handshakes // nil over plain TCP
	repeat     int
	ci         bool
	work       *workload
	// shard is --shard, --start-at and --start-in (open sweeps of listed
	// rates only): each step is the shard's part of the step's timeline,
	// and with a start each step starts at its planned instant.
	shard shardConfig
	// cluster is --cluster: an open sweep opens conns to each primary and
	// routes by slot (keys and tagged from clusterKeys); a closed sweep
	// runs bench --cluster's loop at each point.
	cluster bool
	keys    []cluster.KeySpec
	tagged  []bool
}

func parseSweepConfig(c *cli.Context) (*sweepConfig, error) {
	cfg := &sweepConfig{closed: c.Bool("closed"), search: c.Bool("search")}
	var err error
	if cfg.target, err = target(c); err != nil {
		return nil, err
	}
	cfg.tls = watchTLS(&cfg.target)
	if cfg.shard, err = parseShard(c, os.LookupEnv, time.Now()); err != nil {
		return nil, err
	}
	if cfg.cluster = c.Bool("cluster"); cfg.cluster && c.Bool("embedded") {
		return nil, usageErrorf("--cluster needs a Redis Cluster: --embedded is a single server")
	}
	if cfg.stepDur = c.Duration("step-duration"); cfg.stepDur <= 0 {
		return nil, usageErrorf("--step-duration %s: want a positive duration such as 5s", cfg.stepDur)
	}
	if cfg.settle = c.Duration("settle"); cfg.settle < 0 {
		return nil, usageErrorf("--settle %s: must not be negative", cfg.settle)
	}
	if cfg.repeat, err = parseRepeat(c); err != nil {
		return nil, err
	}
	out, err := parseOutput(c)
	if err != nil {
		return nil, err
	}
	cfg.showErrs, cfg.slo, cfg.quiet, cfg.files, cfg.interval = out.showErrs, out.slo, out.quiet, out.files, out.interval
	cfg.sloSet, cfg.ci = c.IsSet("slo"), c.Bool("ci")
	cfg.seed = parseSeed(c)
	switch placed := c.IsSet("shard") || c.IsSet("start-at") || c.IsSet("start-in"); {
	case placed && cfg.closed:
		// A closed loop has no timeline to share or to start at an instant:
		// its load is its clients, each waiting for its own replies.
		return nil, usageErrorf("--shard, --start-at and --start-in shard an open sweep's timeline; a closed sweep has none: run it from one process, or give each machine its own -c")
	case c.IsSet("shard") && cfg.search:
		return nil, usageErrorf("--shard cannot search: each shard would choose its next rate from its own part of the measurements; list the rates (--rates, or --from, --to and --step) and merge the shards' steps")
	}
	if cfg.closed {
		err = cfg.parseClosed(c)
	} else {
		err = cfg.parseOpen(c)
	}
	if err != nil {
		return nil, err
	}
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
		return nil, usageErrorf("a sweep runs one workload: -t names %d tests; pick one, or make them one test with --mix", len(cfg.work.tests))
	}
	if cfg.closed {
		err = checkClosedBudget(cfg.work, slicesMax(cfg.clients), slicesMax(cfg.pipelines))
	} else {
		err = checkMaxBuffer(cfg.work, cfg.target.MaxBuffer)
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func (cfg *sweepConfig) parseOpen(c *cli.Context) error {
	for _, name := range []string{"P"} {
		if c.IsSet(name) {
			return usageErrorf("-%s belongs to a closed sweep: add --closed", name)
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(c.String("c")))
	if err != nil || n < 1 || n > maxConnections {
		return usageErrorf("-c %q: want 1 to %d connections (a list needs --closed)", c.String("c"), maxConnections)
	}
	cfg.conns = n
	rate := func(name string) (float64, error) {
		r, err := scheduler.ParseRate(c.String(name))
		if err != nil {
			return 0, usageErrorf("--%s: %v", name, err)
		}
		return r.PerSecond(), nil
	}
	switch {
	case cfg.search:
		if !cfg.sloSet {
			return usageErrorf("--search needs --slo: the search finds the highest rate that meets it")
		}
		for _, name := range []string{"rates", "step"} {
			if c.IsSet(name) {
				return usageErrorf("--search chooses its own rates: drop --%s (--from and --to bound it)", name)
			}
		}
		from := defaultSearchFrom
		if c.IsSet("from") {
			from = c.String("from")
		}
		r, err := scheduler.ParseRate(from)
		if err != nil {
			return usageErrorf("--from: %v", err)
		}
		cfg.from = r.PerSecond()
		if c.IsSet("to") {
			if cfg.to, err = rate("to"); err != nil {
				return err
			}
			// --to below a given --from is a mistake; below the default
			// --from, the search starts at --to.
			if cfg.to < cfg.from && c.IsSet("from") {
				return usageErrorf("--to %s is below --from %s", c.String("to"), from)
			}
		}
		if cfg.precision, err = parseShare(c.String("precision")); err != nil {
			return usageErrorf("--precision %q: want a share such as 5%% or 0.05, above 0 and below 100%%", c.String("precision"))
		}
		if cfg.maxSteps = c.Int("max-steps"); cfg.maxSteps < 1 || cfg.maxSteps > maxSweepPoints {
			return usageErrorf("--max-steps %d: want 1 to %d", cfg.maxSteps, maxSweepPoints)
		}
	case c.IsSet("rates"):
		for _, name := range []string{"from", "to", "step"} {
			if c.IsSet(name) {
				return usageErrorf("--rates lists the rates: drop --%s", name)
			}
		}
		for _, f := range strings.Split(c.String("rates"), ",") {
			r, err := scheduler.ParseRate(f)
			if err != nil {
				return usageErrorf("--rates: %v", err)
			}
			cfg.rates = append(cfg.rates, r.PerSecond())
		}
	case c.IsSet("from") || c.IsSet("to") || c.IsSet("step"):
		if !c.IsSet("from") || !c.IsSet("to") || !c.IsSet("step") {
			return usageErrorf("--from, --to and --step go together (or list the rates with --rates)")
		}
		from, err := rate("from")
		if err != nil {
			return err
		}
		to, err := rate("to")
		if err != nil {
			return err
		}
		step, err := rate("step")
		if err != nil {
			return err
		}
		if to < from {
			return usageErrorf("--to %s is below --from %s", c.String("to"), c.String("from"))
		}
		if (to-from)/step >= maxSweepPoints {
			return usageErrorf("--from %s --to %s --step %s makes more than %d steps", c.String("from"), c.String("to"), c.String("step"), maxSweepPoints)
		}
		for k := 0; ; k++ {
			r := from + float64(k)*step
			if r > to*(1+1e-12) {
				break
			}
			cfg.rates = append(cfg.rates, math.Round(r*1000)/1000)
		}
	default:
		return usageErrorf("give the rates (--rates 10k,20k,40k, or --from, --to and --step), --search with --slo, or --closed")
	}
	if len(cfg.rates) > maxSweepPoints {
		return usageErrorf("--rates lists %d rates; at most %d", len(cfg.rates), maxSweepPoints)
	}
	switch cfg.arrival = c.String("arrival"); cfg.arrival {
	case "uniform", "poisson":
	default:
		return usageErrorf("--arrival %q: want uniform or poisson", cfg.arrival)
	}
	if k := c.Int("max-inflight"); k < 1 || k > maxInflightPerConn {
		return usageErrorf("--max-inflight %d: want 1 to %d", k, maxInflightPerConn)
	} else {
		cfg.target.MaxInflight = k
	}
	if err := checkInflightBudget(cfg.conns, cfg.target.MaxInflight); err != nil {
		return err
	}
	if cfg.target.MaxBuffer, err = parseMaxBuffer(c); err != nil {
		return err
	}
	p, ok := scheduler.ParsePacing(c.String("pacing"))
	if !ok {
		return usageErrorf("--pacing %q: want auto, precise or coarse", c.String("pacing"))
	}
	cfg.pacing = p
	if cfg.drain = c.Duration("drain"); cfg.drain < 0 {
		return usageErrorf("--drain %s: must not be negative", cfg.drain)
	}
	if cfg.drain == 0 {
		cfg.drain = time.Nanosecond // zero would mean the default
	}
	if cfg.lagLimit = c.Duration("lag-limit"); c.IsSet("lag-limit") && cfg.lagLimit <= 0 {
		return usageErrorf("--lag-limit %s: want a positive duration", cfg.lagLimit)
	}
	if !c.IsSet("lag-limit") {
		cfg.lagLimit = sloLagLimit(cfg.pacing, cfg.slo)
	}
	if cfg.timeout = c.Duration("timeout"); cfg.timeout < 0 || (c.IsSet("timeout") && cfg.timeout == 0) {
		return usageErrorf("--timeout %s: want a positive duration", cfg.timeout)
	}
	if cfg.backlog = c.Duration("max-backlog"); cfg.backlog <= 0 {
		return usageErrorf("--max-backlog %s: want a positive duration", cfg.backlog)
	}
	cfg.abortAfter = defaultAbortAfter(cfg.slo)
	if c.IsSet("abort-after") {
		if cfg.abortAfter = c.Duration("abort-after"); cfg.abortAfter < 0 {
			return usageErrorf("--abort-after %s: must not be negative", cfg.abortAfter)
		}
	}
	return nil
}

func (cfg *sweepConfig) parseClosed(c *cli.Context) error {
	for _, name := range []string{"rates", "from", "to", "step", "search", "settle", "abort-after", "max-steps", "precision", "arrival", "pacing", "max-inflight", "max-backlog", "lag-limit", "timeout"} {
		if c.IsSet(name) {
			return usageErrorf("--%s belongs to an open sweep: drop it or --closed", name)
		}
	}
	var err error
	if cfg.clients, err = parseIntList(c.String("c"), 1, maxConnections); err != nil {
		return usageErrorf("-c %q: want a list of 1 to %d connections, such as 10,50,100,200", c.String("c"), maxConnections)
	}
	if cfg.pipelines, err = parseIntList(c.String("P"), 1, 1<<20); err != nil {
		return usageErrorf("-P %q: want a list of batch sizes, such as 1,16,64", c.String("P"))
	}
	if len(cfg.clients)*len(cfg.pipelines) > maxSweepPoints {
		return usageErrorf("-c × -P makes %d points; at most %d", len(cfg.clients)*len(cfg.pipelines), maxSweepPoints)
	}
	if cfg.drain = c.Duration("drain"); cfg.drain <= 0 {
		cfg.drain = time.Nanosecond
	}
	return nil
}

// parseIntList reads "10,50,100" with every value in [lo, hi].
func parseIntList(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("bad value %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseShare reads 5% or 0.05: a share strictly between 0 and 1.
func parseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("bad share %q", s)
	}
	return v, nil
}

func slicesMax(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// defaultAbortAfter is --abort-after's default: 10× the SLO's largest
// latency bound, at least minAbortAfter; 1 s without one.
func defaultAbortAfter(slo report.SLO) time.Duration {
	b := slo.LoosestLatency()
	if b <= 0 {
		return time.Second
	}
	return max(10*b, minAbortAfter)
}

// pointVerdict judges a sweep point against the SLO with the trust rule
// (report.Judge, which also sets res.Verdict). pass is nil without an
// SLO; outcome is the judgement the sweep's exit code reads.
//
// A point passes when the SLO holds and the load was delivered (Judge:
// Trusted), no step of it was aborted and its target stayed, or when the
// SLO failed on response time but holds on service time (onService): the
// failure is then the generator's lateness (the step's verdict says
// generator_behind), and a late generator only makes the load burstier,
// which can only lengthen service times, so the server meets the SLO at
// this rate. Without this a search on a busy machine measures the
// machine's scheduling noise, not the server. An under-delivered load
// neither passes nor shows a server's failure: Untrusted.
func pointVerdict(slo report.SLO, res *scheduler.Result, aborted bool) (s *report.SLOResult, pass *bool, onService bool, outcome report.Outcome, err error) {
	if s, err = slo.Check(res); err != nil {
		return nil, nil, false, report.Trusted, err
	}
	j := report.Judge(res, s)
	res.Verdict, res.VerdictReason = j.Verdict, j.Reason
	outcome = j.Outcome
	if s == nil {
		return nil, nil, false, outcome, nil
	}
	ok := false
	switch {
	case aborted:
		// The oldest request waited past the abort bound: the server's.
		outcome = report.Violated
	case j.Outcome == report.Trusted:
		ok = s.Pass
	case j.Outcome == report.Untrusted && s.MetOnService() && res.Mode == "open":
		h := scheduler.Assess(res)
		if !h.UnderDelivered {
			ok, onService, outcome = true, true, report.Trusted
		}
	}
	return s, &ok, onService, outcome, nil
}

func (cfg *sweepConfig) echo(ctx context.Context, faults string) map[string]any {
	extra := map[string]any{
		"sweep":           map[bool]string{false: "open", true: "closed"}[cfg.closed],
		"step_duration_s": cfg.stepDur.Seconds(),
		"repeat":          cfg.repeat,
	}
	cc := commonConfig{target: cfg.target.Addr, embedded: faults,
		sizes: cfg.work.opts.Sizes, keyspace: cfg.work.opts.Keyspace, keyDist: cfg.work.keys,
		seed: cfg.seed, tests: testIDs(cfg.work), duration: cfg.stepDur}
	if cfg.closed {
		extra["clients"], extra["pipelines"] = cfg.clients, cfg.pipelines
		cc.conns, cc.pipeline = slicesMax(cfg.clients), slicesMax(cfg.pipelines)
	} else {
		cc.conns = cfg.conns
		extra["arrival"], extra["pacing"], extra["settle_s"] = cfg.arrival, cfg.pacing.String(), cfg.settle.Seconds()
		extra["abort_after_s"] = cfg.abortAfter.Seconds()
		extra["max_inflight"], extra["max_buffer"], extra["drain_s"] = cfg.target.MaxInflight, cfg.target.MaxBuffer, cfg.drain.Seconds()
		if cfg.search {
			extra["search"] = map[string]any{"from": cfg.from, "to": cfg.to, "precision": cfg.precision, "max_steps": cfg.maxSteps}
		} else {
			extra["rates"] = cfg.rates
		}
	}
	if t := cfg.work.tests[0]; t.custom || cfg.work.mixed {
		extra["command"] = t.title
	}
	if cfg.cluster {
		extra["cluster"] = true // an open sweep's connections are per primary
	}
	return cc.echo(ctx, extra)
}

func sweepAction(c *cli.Context) error {
	cfg, err := parseSweepConfig(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	mx, err := startMetrics(c)
	if err != nil {
		return err
	}
	defer mx.close()
	emb, stopEmbedded, err := startEmbedded(c, &cfg.target, stderr)
	if err != nil {
		return err
	}
	defer stopEmbedded()
	mx.announce(stderr)
	out := c.App.Writer
	if cfg.files.stdout() {
		out = stderr // stdout carries the JSON
	}
	mode := "open"
	if cfg.closed {
		mode = "closed"
	}
	ctx := c.Context
	if cfg.cluster {
		// Every key must be routable, before anything is sent.
		if err := cfg.clusterCheck(ctx); err != nil {
			return err
		}
	}
	doc := &report.Document{
		Schema: report.Schema, Mode: mode, Tool: report.Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339), Config: cfg.echo(ctx, faultsOf(emb)), Tests: []report.Test{},
	}
	cfg.shard.document(doc)
	srv := askServer(ctx, cfg.target, stderr)
	srv.noteConfig()
	doc.Server = srv.id
	if !cfg.quiet && srv.id.Available {
		fmt.Fprintf(out, "%s\n\n", report.ServerLine(srv.id))
	}
	s := &sweeper{cfg: cfg, c: c, mx: mx, out: out, doc: doc, srv: srv}
	var code int
	if cfg.closed {
		code, err = s.runClosed()
	} else {
		code, err = s.runOpen()
	}
	if cfg.files.any() {
		if werr := cfg.files.write(c.App.Writer, doc); werr != nil {
			return failed(werr)
		}
	}
	if !cfg.quiet && len(doc.Tests) > 0 {
		printSeed(out, cfg.seed)
	}
	switch {
	case doc.Interrupted || ctx.Err() != nil:
		if err != nil {
			fmt.Fprintf(stderr, "pacer: %s\n", oneLine(err.Error()))
		}
		return exitCode(exitInterrupted)
	case err != nil:
		return err
	case code != exitOK:
		return exitCode(code)
	}
	return nil
}

// clusterCheck reads where the test's keys are (clusterKeys refuses keys
// that may span slots); a closed sweep sends each connection's requests
// to one primary, as bench --cluster does, so its keys need {tag}.
func (cfg *sweepConfig) clusterCheck(ctx context.Context) error {
	j := cfg.work.tests[0]
	var err error
	if cfg.keys, cfg.tagged, err = clusterKeys(ctx, cfg.target, j.recipe); err != nil {
		return err
	}
	if cfg.closed {
		return needTags(j.recipe, cfg.keys, cfg.tagged, "sweep --closed --cluster")
	}
	return nil
}

// sweeper runs one sweep and fills its document.
type sweeper struct {
	cfg *sweepConfig
	c   *cli.Context
	mx  *liveMetrics
	out io.Writer
	doc *report.Document
	srv *serverSide
	// nodes are the primaries of a closed sweep with --cluster.
	nodes *benchCluster
}

// openPoint is a rate of an open sweep and the steps (repeats) it ran.
type openPoint struct {
	rate    float64
	steps   []*scheduler.Step
	pooled  *scheduler.Result
	slo     *report.SLOResult
	pass    *bool
	aborted bool
	// onService: it met the SLO on service time only (see pointVerdict);
	// outcome is its judgement by the trust rule.
	onService bool
	outcome   report.Outcome
	// server is what the server counted during the point's steps.
	server *serverinfo.Stats
	// judgedWith are the earlier points at the same rate whose
	// measurements its verdict pooled (a search's second look).
	judgedWith []int
	// planned is the measured duration planned for each of its steps
	// (--step-duration, or longer for a percentile's samples: see
	// sampleRule); short are the SLO's percentile clauses its samples
	// could not support, which leave it unjudged (pass nil).
	planned time.Duration
	short   []string
}

// judgeAgain judges p, a rate measured before (earlier), by its best
// measurement: it passes when p or any earlier one passed. Noise on a
// shared machine only adds latency, so one step that met the SLO shows
// the server can meet it at this rate; a failure must repeat (and a step
// that could not be judged takes an earlier pass).
func judgeAgain(p *openPoint, earlier []*openPoint, index map[*openPoint]int) {
	for _, q := range earlier {
		p.judgedWith = append(p.judgedWith, index[q])
		if q.pass != nil && *q.pass && !(p.pass != nil && *p.pass) {
			yes := true
			p.pass, p.onService, p.outcome = &yes, q.onService, report.Trusted
		}
	}
}

// runOpen runs the open sweep (or search) on one set of connections.
func (s *sweeper) runOpen() (int, error) {
	cfg, ctx, stderr := s.cfg, s.c.Context, s.c.App.ErrWriter
	j := cfg.work.tests[0]
	stream, err := cfg.work.stream(j, cfg.shard.streamSeed(cfg.seed))
	if err != nil {
		return 0, usageErrorf("%v", err)
	}
	if err := cfg.shard.wait(ctx, stderr, cfg.quiet); err != nil {
		s.doc.Interrupted = true
		return 0, nil
	}
	cfg.tls.take() // the sweep's own handshakes only
	var conns []*conn.Conn
	var oc *scheduler.OpenCluster
	if cfg.cluster {
		cl, err := dialCluster(ctx, cfg.target, cfg.conns, stderr)
		if err != nil {
			return 0, failed(err)
		}
		conns, oc = cl.conns, cl.cfg
		oc.Keys, oc.Tagged = cfg.keys, cfg.tagged
	} else if conns, err = dialPool(ctx, cfg.target, cfg.conns, stderr); err != nil {
		return 0, failed(err)
	}
	// Steps long enough for the SLO's percentiles (sampleRule).
	var rule sampleRule
	if cfg.sloSet {
		rule = newSampleRule(cfg.slo, cfg.stepDur)
	} else {
		rule = sampleRule{base: cfg.stepDur, cap: cfg.stepDur}
	}
	var search *rateSearch
	rate := 0.0
	if cfg.search {
		search = newRateSearch(cfg.from, cfg.to, cfg.precision, cfg.maxSteps)
		search.floor, search.floorWhat, search.floorHow = rule.floor(), rule.metric, rule.how()
		rate = search.first()
	} else {
		rate = cfg.rates[0]
	}
	var points []*openPoint
	stats := map[*scheduler.Step]*serverinfo.Stats{}
	byRate := map[float64][]*openPoint{}
	index := map[*openPoint]int{}
	cur := &openPoint{rate: rate}
	listIndex := 0
	// Progress and metrics of the step under way.
	onStart := func(*scheduler.Live) {}
	endStep := func() {}
	seen := 0
	// closePoint pools the current point's steps and judges it; with
	// decide, it also picks the next rate.
	var judgeErr error
	closePoint := func(decide bool) (float64, bool) {
		p := cur
		rs := make([]*scheduler.Result, len(p.steps))
		for k, st := range p.steps {
			rs[k] = st.Result
			p.aborted = p.aborted || st.Aborted
		}
		p.pooled = pool(rs)
		for _, st := range p.steps {
			switch {
			case stats[st] == nil:
			case p.server == nil:
				p.server = stats[st]
			default:
				p.server.Merge(stats[st])
			}
		}
		p.pooled.Name = fmt.Sprintf("%s at %s/s", j.title, formatRate(p.rate))
		var err error
		if p.slo, p.pass, p.onService, p.outcome, err = pointVerdict(cfg.slo, p.pooled, p.aborted); err != nil && judgeErr == nil {
			judgeErr = err
		}
		// Too few samples for a percentile clause: neither pass nor fail.
		if short := rule.short(p.pooled, p.slo); p.outcome != report.Failed && unjudged(p.slo, short, p.aborted) {
			p.short, p.pass, p.onService = short, nil, false
		}
		index[p] = len(points)
		points = append(points, p)
		if !decide {
			return 0, false
		}
		if search != nil && len(byRate[p.rate]) > 0 && (p.pass != nil || p.short != nil) {
			judgeAgain(p, byRate[p.rate], index)
		}
		byRate[p.rate] = append(byRate[p.rate], p)
		if search != nil {
			v := stepFail
			switch {
			case p.pass != nil && *p.pass:
				v = stepPass
			case p.pass == nil:
				v = stepUnjudged
			}
			return search.record(p.rate, v)
		}
		listIndex++
		if listIndex < len(cfg.rates) {
			return cfg.rates[listIndex], true
		}
		return 0, false
	}
	// The step under way: its whole timeline (a shard plans the next
	// step's start from it) and the server's counters before it.
	var stepTL scheduler.Timeline
	var stepDur time.Duration
	var before *serverinfo.Snapshot
	finishStep := func(st *scheduler.Step) {
		st.TLS = cfg.tls.take()
		redactResult(ctx, st.Result)
		cfg.shard.started(st.Result)
		cfg.shard.next(stepTL, cfg.settle+stepDur, 0, cfg.drain)
		if !cfg.cluster { // the seed's counters are not the cluster's
			stats[st] = s.srv.since(before)
		}
		cur.steps = append(cur.steps, st)
		if !cfg.quiet {
			s.stepLine(st)
		}
	}
	next := func(i int, prev *scheduler.Step) (scheduler.StepPlan, bool) {
		endStep()
		if prev != nil {
			seen++
			finishStep(prev)
			// An aborted step ends its point, unless shards must keep
			// running the same steps.
			if len(cur.steps) == cfg.repeat || prev.Aborted && !cfg.shard.sharded() {
				r, ok := closePoint(true)
				if !ok {
					cur = nil
					return scheduler.StepPlan{}, false
				}
				cur = &openPoint{rate: r}
			}
		}
		r := scheduler.RatePerSecond(cur.rate)
		name := runName(fmt.Sprintf("%s at %s/s", j.title, formatRate(cur.rate)), len(cur.steps), cfg.repeat)
		var tl scheduler.Timeline = scheduler.Uniform{Rate: r}
		if cfg.arrival == "poisson" {
			tl = scheduler.NewPoisson(r, cfg.seed+uint64(i))
		}
		stepTL = tl
		// Every shard plans the same durations: from the step's whole
		// rate, not its own share.
		stepDur = rule.duration(cur.rate)
		cur.planned = stepDur
		tl, err := cfg.shard.timeline(tl)
		if err != nil {
			judgeErr = usageErrorf("--shard: %v", err)
			return scheduler.StepPlan{}, false
		}
		if !cfg.cluster {
			before = s.srv.before()
		}
		liveCh, connCh := make(chan *scheduler.Live, 1), make(chan *scheduler.Live, 1)
		stopProgress := func() {}
		if !cfg.quiet {
			stopProgress = newProgress(stderr).watch(name, liveCh)
		}
		stopConns := watchConnections(stderr, name, connCh)
		var endMetrics func()
		onStart, endMetrics = s.mx.hook(j.title, metrics.ModeOpen, func(l *scheduler.Live) { liveCh <- l; connCh <- l })
		endStep = func() {
			endMetrics()
			stopProgress()
			stopConns()
			endStep = func() {}
		}
		return scheduler.StepPlan{Name: name, Timeline: tl, Rate: r, Duration: stepDur, Settle: cfg.settle,
			AbortAfter: cfg.abortAfter, Start: cfg.shard.instant()}, true
	}
	steps, runErr := scheduler.RunOpenSteps(ctx, conns, stream, scheduler.OpenConfig{
		OnStart:      func(l *scheduler.Live) { onStart(l) },
		CommandNames: j.names,
		Pacing:       cfg.pacing,
		Drain:        cfg.drain,
		LagLimit:     cfg.lagLimit,
		Timeout:      cfg.timeout,
		Interval:     cfg.interval,
		MaxBacklog:   cfg.backlog,
		Redial: func(ctx context.Context) (*conn.Conn, error) {
			return conn.Dial(ctx, cfg.target)
		},
		OnErrorReply: errorsTo(stderr, cfg.showErrs),
		Cluster:      oc,
	}, next)
	endStep()
	// The steps next never saw: the last one, interrupted or failed.
	for _, st := range steps[seen:] {
		finishStep(st)
	}
	interrupted := ctx.Err() != nil
	if cur != nil && len(cur.steps) > 0 {
		closePoint(false) // cut short: measured, not judged by the search
	}
	for _, st := range steps {
		interrupted = interrupted || st.Interrupted
	}
	s.doc.Interrupted = interrupted
	if err := s.openDocument(points, search); err != nil {
		return 0, failed(err)
	}
	if err := s.openText(points, search); err != nil {
		return 0, failed(err)
	}
	if runErr != nil {
		return 0, failed(runErr)
	}
	if judgeErr != nil {
		return 0, failed(judgeErr)
	}
	best := 0.0
	if r := s.doc.Sweep.SustainableRate; r != nil {
		best = *r
	}
	return openCode(stderr, points, cfg.sloSet, best, interrupted), nil
}

// openCode is an open sweep's exit code, by the trust rule. A point whose
// target was lost exits 1. Without an SLO each point is judged as run
// judges a test: one the generator's lateness makes untrustworthy exits
// 4. With an SLO the conclusion rests on the bracket, the sustainable
// rate best (0: none) and the lowest failing rate above it: that failure
// must be the server's (some measurement at that rate Violated the SLO,
// or was aborted) for the result to stand; when every failure there is
// one the generator's lateness could explain, the sweep exits 4, as run
// does. No sustainable rate with a credible failure at the lowest rate
// exits 3.
func openCode(stderr io.Writer, points []*openPoint, sloSet bool, best float64, interrupted bool) int {
	code := exitOK
	for _, p := range points {
		if p.outcome == report.Failed && !p.aborted {
			fmt.Fprintf(stderr, "pacer: %s: target lost: %s\n", safetext.Escape(p.pooled.Name), oneLine(p.pooled.VerdictReason))
			code = worst(code, exitFailed)
		}
	}
	if interrupted {
		return code
	}
	if !sloSet {
		for _, p := range points {
			if p.outcome == report.Untrusted && !p.aborted {
				fmt.Fprintf(stderr, "pacer: %s: not trustworthy: %s\n", safetext.Escape(p.pooled.Name), oneLine(p.pooled.VerdictReason))
				code = worst(code, exitUntrusted)
			}
		}
		return code
	}
	upper := math.Inf(1)
	for _, p := range points {
		if p.pass != nil && !*p.pass && p.rate > best {
			upper = min(upper, p.rate)
		}
	}
	if math.IsInf(upper, 1) {
		if best == 0 {
			return worst(code, exitSLO) // nothing measured to a verdict
		}
		return code
	}
	credible := false
	var doubt *openPoint
	for _, p := range points {
		if p.rate != upper || p.pass == nil || *p.pass {
			continue
		}
		switch p.outcome {
		case report.Violated, report.Failed:
			credible = true
		case report.Untrusted:
			doubt = p
		}
	}
	switch {
	case !credible && doubt != nil:
		fmt.Fprintf(stderr, "pacer: %s: not trustworthy: the sweep's failure at %s/s could be the generator's: %s\n",
			safetext.Escape(doubt.pooled.Name), formatRate(upper), oneLine(doubt.pooled.VerdictReason))
		return worst(code, exitUntrusted)
	case best == 0:
		return worst(code, exitSLO)
	}
	return code
}

// basis is the times a point's SLO verdict rests on: "response",
// "service" (see pointVerdict), or "" without an SLO.
func basis(slo, onService bool) string {
	switch {
	case !slo:
		return ""
	case onService:
		return "service"
	}
	return "response"
}

// stepLine prints a finished step's one-line summary.
// The step is judged alone first (its verdict by the trust rule); its
// point is judged when its steps are pooled.
func (s *sweeper) stepLine(st *scheduler.Step) {
	sr, err := s.cfg.slo.Check(st.Result)
	if err != nil {
		sr = nil // said when the point is judged
	}
	judgeSilently(st.Result, sr)
	_ = report.Quiet(s.out, st.Result, sr)
	if st.Aborted {
		fmt.Fprintf(s.out, "  aborted: %s\n", st.AbortReason)
	}
}

// sustainable is the highest rate that met the SLO below the lowest that
// did not, in a plain sweep (0: none).
func sustainable(points []*openPoint) float64 {
	lowestFail := math.Inf(1)
	for _, p := range points {
		if p.pass != nil && !*p.pass {
			lowestFail = min(lowestFail, p.rate)
		}
	}
	best := 0.0
	for _, p := range points {
		if p.pass != nil && *p.pass && p.rate < lowestFail {
			best = max(best, p.rate)
		}
	}
	return best
}

func (s *sweeper) openDocument(points []*openPoint, search *rateSearch) error {
	cfg := s.cfg
	j := cfg.work.tests[0]
	for i, p := range points {
		t, err := testJSON(p.pooled, cfg.ci)
		if err != nil {
			return err
		}
		t.ID, t.SLO, t.Server = j.id(), p.slo, p.server
		info := &report.StepInfo{Index: i, TargetRate: p.rate, Pass: p.pass, Aborted: p.aborted, SettleS: cfg.settle.Seconds(),
			Basis: basis(cfg.sloSet, p.onService), JudgedWith: p.judgedWith, InsufficientSamples: p.short, PlannedS: p.planned.Seconds()}
		for _, st := range p.steps {
			info.Expired += st.Expired
			if st.Aborted && info.AbortReason == "" {
				info.AbortReason = st.AbortReason
			}
		}
		t.Step = info
		if cfg.repeat > 1 {
			rs := make([]*scheduler.Result, len(p.steps))
			for k, st := range p.steps {
				rs[k] = st.Result
			}
			if t.Repeats, err = repeatsOf(rs, j.id(), cfg.ci, cfg.slo); err != nil {
				return err
			}
		}
		s.doc.Tests = append(s.doc.Tests, t)
	}
	sw := &report.Sweep{Mode: "open", Search: search != nil, Steps: len(points)}
	if cfg.sloSet {
		sw.SLO = cfg.slo.Spec
	}
	var best float64
	switch {
	case search != nil:
		sw.Precision = cfg.precision
		best = search.sustainable()
		sw.Converged = search.converged
		sw.Reason = search.reason
		if !search.done {
			sw.Reason = "interrupted"
		}
	default:
		best = sustainable(points)
		sw.Converged = len(points) == len(cfg.rates)
		sw.Reason = fmt.Sprintf("%d of %d rates measured", len(points), len(cfg.rates))
	}
	if cfg.sloSet && best > 0 {
		sw.SustainableRate = &best
	}
	s.doc.Sweep = sw
	return nil
}

func (s *sweeper) openText(points []*openPoint, search *rateSearch) error {
	cfg := s.cfg
	var b strings.Builder
	j := cfg.work.tests[0]
	what := "sweep"
	if search != nil {
		what = "search"
	}
	steps := cfg.stepDur.String()
	if rule := newSampleRule(cfg.slo, cfg.stepDur); cfg.sloSet && rule.metric != "" && rule.window == 0 && rule.cap > cfg.stepDur {
		steps += fmt.Sprintf(" (up to %s where %s needs the samples)", rule.cap, rule.metric)
	}
	conns := fmt.Sprintf("%d connections", cfg.conns)
	if cfg.cluster {
		conns += " per primary"
	}
	fmt.Fprintf(&b, "====== %s: %s, %s, steps of %s after a %s settle ======\n",
		what, safetext.Escape(j.title), conns, steps, cfg.settle)
	rows := make([]report.OpenRow, len(points))
	for i, p := range points {
		rows[i] = report.NewOpenRow(p.pooled, p.pass, p.aborted)
		rows[i].OnService, rows[i].JudgedWith, rows[i].Unjudged = p.onService, p.judgedWith, p.short
		rows[i].Seconds /= float64(max(1, len(p.steps)))
	}
	if err := report.WriteOpenSweep(&b, rows); err != nil {
		return err
	}
	for i, p := range points {
		// A cluster's per-node table, as run prints it (not with -q).
		nodes := !cfg.quiet && len(p.pooled.Nodes) > 0
		if !cfg.ci && cfg.repeat == 1 && !nodes {
			continue
		}
		fmt.Fprintf(&b, "  step %d at %s/s:\n", i, formatRate(p.rate))
		if cfg.ci || cfg.repeat > 1 {
			var rep *report.Repeats
			if cfg.repeat > 1 {
				figs := make([]map[string]float64, len(p.steps))
				for k, st := range p.steps {
					figs[k] = report.Figures(st.Result)
				}
				rep = report.NewRepeats(figs, nil)
			}
			if err := writeNotes(&b, p.pooled, cfg.ci, rep); err != nil {
				return err
			}
		}
		if nodes {
			if err := report.WriteNodes(&b, p.pooled); err != nil {
				return err
			}
		}
	}
	sw := s.doc.Sweep
	switch {
	case !cfg.sloSet:
	case sw.SustainableRate != nil:
		fmt.Fprintf(&b, "  sustainable rate: %s/s meets %s (%s)\n", formatRate(*sw.SustainableRate), cfg.slo.Spec, sw.Reason)
	default:
		fmt.Fprintf(&b, "  sustainable rate: none: no step met %s (%s)\n", cfg.slo.Spec, sw.Reason)
	}
	b.WriteString("\n")
	_, err := io.WriteString(s.out, b.String())
	return err
}

// closedPoint is one -c × -P point of a closed sweep and its runs.
type closedPoint struct {
	clients, pipeline int
	runs              []*scheduler.Result
	pooled            *scheduler.Result
	slo               *report.SLOResult
	pass              *bool
	figs              report.ClosedPoint
}

// runClosed runs the bench loop at every point, in the order of
// increasing requests in flight (clients × pipeline; fewer clients first
// among equals).
func (s *sweeper) runClosed() (int, error) {
	cfg, ctx, stderr := s.cfg, s.c.Context, s.c.App.ErrWriter
	j := cfg.work.tests[0]
	var pts []*closedPoint
	for _, c := range cfg.clients {
		for _, p := range cfg.pipelines {
			pts = append(pts, &closedPoint{clients: c, pipeline: p})
		}
	}
	sort.SliceStable(pts, func(a, b int) bool {
		x, y := pts[a], pts[b]
		if x.clients*x.pipeline != y.clients*y.pipeline {
			return x.clients*x.pipeline < y.clients*y.pipeline
		}
		return x.clients < y.clients
	})
	if cfg.cluster {
		// The primaries, as bench --cluster finds them, once: each point
		// dials its clients over them by redis-benchmark's rule.
		var err error
		if s.nodes, err = discoverCluster(ctx, cfg.target, stderr, true); err != nil {
			return 0, err
		}
	}
	var runErr error
	n := 0
	var done []*closedPoint
	cfg.tls.take() // the sweep's own handshakes only
points:
	for _, pt := range pts {
		for k := 0; k < cfg.repeat; k++ {
			name := runName(fmt.Sprintf("%s -c %d -P %d", j.title, pt.clients, pt.pipeline), k, cfg.repeat)
			res, err := s.closedRun(ctx, j, name, pt.clients, pt.pipeline, n, stderr)
			n++
			if res != nil {
				res.TLS = cfg.tls.take()
				redactResult(ctx, res)
				pt.runs = append(pt.runs, res)
				if !cfg.quiet {
					sum := histo.Summarize(res.Response)
					fmt.Fprintf(s.out, "%s: %.2f requests per second, latency p50=%.3f msec p99=%.3f msec\n",
						safetext.Escape(res.Name), res.AchievedRate(), sum.P50, sum.P99)
				}
			}
			if err != nil {
				runErr = err
			}
			if err != nil || ctx.Err() != nil || (res != nil && res.Interrupted) {
				if len(pt.runs) > 0 {
					done = append(done, pt)
				}
				break points
			}
		}
		done = append(done, pt)
	}
	fp := make([]report.ClosedPoint, len(done))
	for i, pt := range done {
		pt.pooled = pool(pt.runs)
		pt.pooled.Name = fmt.Sprintf("%s -c %d -P %d", j.title, pt.clients, pt.pipeline)
		var err error
		if pt.slo, pt.pass, _, _, err = pointVerdict(cfg.slo, pt.pooled, false); err != nil {
			return 0, failed(err)
		}
		figs := make([]map[string]float64, len(pt.runs))
		for k, r := range pt.runs {
			figs[k] = report.Figures(r)
		}
		med := report.NewRepeats(figs, nil).Median
		fp[i] = report.ClosedPoint{Index: i, Clients: pt.clients, Pipeline: pt.pipeline,
			Throughput: round3(med["achieved_rate"]), MeanMs: med["mean"], P50Ms: med["p50"], P99Ms: med["p99"]}
		fp[i].Little()
		fp[i].LittleMs, fp[i].LittleRatio = round6(fp[i].LittleMs), round6(fp[i].LittleRatio)
	}
	knee := -1
	if ctx.Err() == nil && runErr == nil {
		knee = report.FindKnee(fp)
	}
	sw := &report.Sweep{Mode: "closed", Steps: len(fp), Points: fp, Converged: len(done) == len(pts)}
	sw.Reason = fmt.Sprintf("%d of %d points measured", len(done), len(pts))
	if knee >= 0 {
		fp[knee].Knee = true
		k := fp[knee]
		sw.Knee = &k
	}
	if cfg.sloSet {
		sw.SLO = cfg.slo.Spec
	}
	s.doc.Sweep = sw
	anyPass := false
	for i, pt := range done {
		t, err := testJSON(pt.pooled, cfg.ci)
		if err != nil {
			return 0, failed(err)
		}
		t.ID, t.SLO = j.id(), pt.slo
		if cfg.repeat > 1 {
			if t.Repeats, err = repeatsOf(pt.runs, j.id(), cfg.ci, cfg.slo); err != nil {
				return 0, failed(err)
			}
		}
		s.doc.Tests = append(s.doc.Tests, t)
		pt.figs = fp[i]
		anyPass = anyPass || (pt.pass != nil && *pt.pass)
	}
	s.doc.Interrupted = ctx.Err() != nil
	var b strings.Builder
	fmt.Fprintf(&b, "====== closed sweep: %s, points of %s (latency from the send) ======\n", safetext.Escape(j.title), cfg.stepDur)
	if err := report.WriteClosedSweep(&b, fp, knee); err != nil {
		return 0, failed(err)
	}
	for _, pt := range done {
		nodes := !cfg.quiet && len(pt.pooled.Nodes) > 0
		if !cfg.ci && cfg.repeat == 1 && pt.slo == nil && !nodes {
			continue
		}
		fmt.Fprintf(&b, "  -c %d -P %d:", pt.clients, pt.pipeline)
		if pt.slo != nil {
			fmt.Fprintf(&b, " %s", pt.slo.Line())
		}
		b.WriteString("\n")
		var rep *report.Repeats
		if cfg.repeat > 1 {
			figs := make([]map[string]float64, len(pt.runs))
			for k, r := range pt.runs {
				figs[k] = report.Figures(r)
			}
			rep = report.NewRepeats(figs, nil)
		}
		if cfg.ci || rep != nil {
			if err := writeNotes(&b, pt.pooled, cfg.ci, rep); err != nil {
				return 0, failed(err)
			}
		}
		if nodes {
			if err := report.WriteNodes(&b, pt.pooled); err != nil {
				return 0, failed(err)
			}
		}
	}
	b.WriteString("\n")
	if _, err := io.WriteString(s.out, b.String()); err != nil {
		return 0, failed(err)
	}
	if runErr != nil {
		return 0, runErr
	}
	code := exitOK
	for _, pt := range done {
		for _, r := range pt.runs {
			if r.Verdict == scheduler.VerdictTargetLost {
				code = worst(code, judge(stderr, r, nil))
			}
		}
	}
	if cfg.sloSet && !anyPass && !s.doc.Interrupted {
		code = worst(code, exitSLO)
	}
	return code, nil
}

// closedRun dials and runs the bench loop once for a point.
func (s *sweeper) closedRun(ctx context.Context, j workTest, name string, clients, pipeline, n int, stderr io.Writer) (*scheduler.Result, error) {
	cfg := s.cfg
	var conns []*conn.Conn
	var cl *scheduler.ClosedCluster // bench --cluster's loop
	var err error
	if s.nodes != nil {
		var of []int
		if conns, of, err = s.nodes.dial(ctx, clients, stderr); err != nil {
			return nil, err
		}
		cl = s.nodes.closed(of, cfg.seed+uint64(n)*7_919)
	} else if conns, err = dialBench(ctx, cfg.target, clients, stderr); err != nil {
		return nil, err
	}
	var templateErr error
	ccfg := scheduler.ClosedConfig{
		Name:         name,
		Duration:     cfg.stepDur,
		Drain:        cfg.drain,
		Pipeline:     pipeline,
		Latency:      scheduler.FirstReply,
		CommandNames: j.names,
		Interval:     cfg.interval,
		NewCommands: func(i int) scheduler.Commands {
			st, err := cfg.work.stream(j, cfg.seed+uint64(n)*1_000_003+uint64(i))
			if err != nil {
				templateErr = err
			}
			return st
		},
		ContinueOnError: true,
		OnErrorReply:    errorsTo(stderr, cfg.showErrs),
		Cluster:         cl,
	}
	liveCh := make(chan *scheduler.Live, 1)
	stopProgress := func() {}
	if !cfg.quiet {
		stopProgress = newProgress(stderr).watch(name, liveCh)
	}
	var endMetrics func()
	ccfg.OnStart, endMetrics = s.mx.hook(j.title, metrics.ModeClosed, func(l *scheduler.Live) { liveCh <- l })
	res, err := scheduler.RunClosed(ctx, conns, ccfg)
	if s.nodes != nil {
		s.nodes.wait() // the slot map refreshes its redirects started
	}
	endMetrics()
	stopProgress()
	if templateErr != nil {
		return nil, usageErrorf("command: %v", templateErr)
	}
	if err != nil {
		return res, failed(err)
	}
	return res, nil
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
