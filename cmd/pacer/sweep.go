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

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/experiment/sweep"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/target"
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
	flags = append(flags, measureFlags()...)
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
	repeat     int
	ci         bool
	work       *workload
	// shard is --shard, --start-at and --start-in (open sweeps of listed
	// rates only): each step is the shard's part of the step's timeline,
	// and with a start each step starts at its planned instant.
	shard *scheduler.Placement
	// cluster is --cluster: an open sweep opens conns to each primary and
	// routes by slot; a closed sweep runs bench --cluster's loop at each
	// point.
	cluster bool
}

func parseSweepConfig(c *cli.Context) (*sweepConfig, error) {
	cfg := &sweepConfig{closed: c.Bool("closed"), search: c.Bool("search")}
	var err error
	if cfg.target, err = targetOptions(c); err != nil {
		return nil, err
	}
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
		from := "1k"
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
		if cfg.maxSteps = c.Int("max-steps"); cfg.maxSteps < 1 || cfg.maxSteps > sweep.MaxPoints {
			return usageErrorf("--max-steps %d: want 1 to %d", cfg.maxSteps, sweep.MaxPoints)
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
		if (to-from)/step >= sweep.MaxPoints {
			return usageErrorf("--from %s --to %s --step %s makes more than %d steps", c.String("from"), c.String("to"), c.String("step"), sweep.MaxPoints)
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
	if len(cfg.rates) > sweep.MaxPoints {
		return usageErrorf("--rates lists %d rates; at most %d", len(cfg.rates), sweep.MaxPoints)
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
	cfg.abortAfter = sweep.DefaultAbortAfter(cfg.slo)
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
	if len(cfg.clients)*len(cfg.pipelines) > sweep.MaxPoints {
		return usageErrorf("-c × -P makes %d points; at most %d", len(cfg.clients)*len(cfg.pipelines), sweep.MaxPoints)
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
	mode := "open"
	if cfg.closed {
		mode = "closed"
	}
	e, err := openEnv(c, envConfig{target: &target.Target{Options: cfg.target, Cluster: cfg.cluster}, place: cfg.shard,
		files: cfg.files, quiet: cfg.quiet, mode: mode, banner: true})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	j := cfg.work.tests[0]
	var keys target.Keys
	if cfg.cluster {
		// Every key must be routable, before anything is sent; a closed
		// sweep sends each connection's requests to one primary, as bench
		// --cluster does, so its keys need {tag}.
		if keys, err = target.ClusterKeys(ctx, e.target.Options, j.recipe); err != nil {
			return err
		}
		if cfg.closed {
			if err := keys.NeedTags(j.recipe, "sweep --closed --cluster"); err != nil {
				return err
			}
		}
	}
	e.doc.Config = cfg.echo(ctx, e.faults())
	e.askServer()
	e.noteConfig()
	if !cfg.quiet && e.server.ID.Available {
		fmt.Fprintf(out, "%s\n\n", report.ServerLine(e.server.ID))
	}
	sc := sweep.Config{
		Test: cfg.work.testOf(j), Rates: cfg.rates, Search: cfg.search, From: cfg.from, To: cfg.to, Precision: cfg.precision,
		MaxSteps: cfg.maxSteps, StepDuration: cfg.stepDur, Settle: cfg.settle, AbortAfter: cfg.abortAfter, Arrival: cfg.arrival,
		Seed: cfg.seed, Conns: cfg.conns, Keys: keys, Clients: cfg.clients, Pipelines: cfg.pipelines, Drain: cfg.drain,
		Interval: cfg.interval, SLO: cfg.slo, Repeat: cfg.repeat, CI: cfg.ci, Quiet: cfg.quiet,
		Open: scheduler.OpenConfig{Pacing: cfg.pacing, Drain: cfg.drain, LagLimit: cfg.lagLimit, Timeout: cfg.timeout,
			Interval: cfg.interval, MaxBacklog: cfg.backlog},
	}
	if !cfg.quiet {
		sc.Print = func(s string) { io.WriteString(out, s) }
	}
	run := sweep.Open
	if cfg.closed {
		run = sweep.Closed
	}
	res, err := run(ctx, e.experiment(cfg.showErrs), sc)
	code := exitOK
	if res != nil {
		e.doc.Tests = append(e.doc.Tests, res.Tests...)
		e.doc.Sweep = res.Sweep
		e.doc.Interrupted = res.Interrupted
		io.WriteString(out, res.Text)
		for _, n := range res.Notes {
			fmt.Fprintln(e.stderr, n)
		}
		code = outcomeCode(res.Outcome)
	}
	if werr := e.writeFiles(); werr != nil {
		return failed(werr)
	}
	if !cfg.quiet && len(e.doc.Tests) > 0 {
		printSeed(out, cfg.seed)
	}
	return e.exit(code, err)
}
