package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/ab"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

func abCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "a", Usage: "the baseline's `URI`: redis[s]://[user:password@]host[:port][/db], rediss: TLS (required)", Category: catTarget},
		&cli.StringFlag{Name: "b", Usage: "the candidate's `URI`, as --a (required)", Category: catTarget},
		&cli.StringFlag{Name: "rate", Usage: "open loop: each side's target `RATE` in requests per second: 2500, 10k, 1.5M (required, unless --closed)", Category: catLoad},
		&cli.BoolFlag{Name: "closed", Usage: "compare closed loops instead (redis-benchmark's: -c connections, each with a batch of -P in flight): throughput and latency from the send", Category: catLoad},
		&cli.IntFlag{Name: "rounds", Value: 6, Usage: fmt.Sprintf("`N` rounds, each a run of A and a run of B, in the order A B, B A, A B … (at most %d)", ab.MaxRounds), Category: catLoad},
		&cli.DurationFlag{Name: "round-duration", Value: 5 * time.Second, Usage: "measure each run for `DURATION`", Category: catLoad},
		&cli.DurationFlag{Name: "warmup", Value: time.Second, Usage: "before each run's measured part, send for `DURATION` unmeasured (0: none)", Category: catLoad},
		&cli.BoolFlag{Name: "duet", Usage: "run both sides of each round at once, on timelines started together with the same arrivals and keys (duet benchmarking): the client host's stalls fall on both alike and cancel in each round's difference; each side shares the host with the other's load", Category: catLoad},
		&cli.BoolFlag{Name: "fill", Usage: "before the first round, write every key of -r once on both targets alike, with -d values (as pacer fill does)", Category: catLoad},
		connsFlag(50),
		&cli.IntFlag{Name: "P", Value: 1, Usage: "--closed: pipeline `NUMREQ` requests per batch", Category: catLoad},
		arrivalFlag(),
		seedFlag("seeds random keys and arrivals, the same for both sides of a round (the JSON records it)"),
	}
	flags = append(flags, openLoadFlags("a request more than `DURATION` late when its turn comes (no connection, or all full) is counted unsent instead of sent")...)
	flags = append(flags, workloadFlags(workloadSpec{
		tests:    "get",
		testsUse: "run the comma-separated `TESTS` (redis-benchmark names: ping,set,get,incr,...), each its own rounds",
		dataUse:  "value `SIZE` in bytes: 32, a range 32-1024, or weighted 64:8,4096:2 (at most 512 MiB)",
		keysUse:  "random keys: __rand_int__ and __key__ become 12-digit numbers below `N`",
	})...)
	flags = append(flags,
		&cli.BoolFlag{Name: "q", Usage: "quiet: no progress, no line per run", Category: catOutput},
		&cli.StringFlag{Name: "json", Usage: "write each side's results as pacer.result/v1: `FILE` with .a and .b before its extension (ab.json: ab.a.json, ab.b.json), which pacer diff reads back paired", Category: catOutput},
		&cli.StringFlag{Name: "diff-json", Usage: "write the comparison as pacer.diff/v1 to `FILE` (- for stdout)", Category: catOutput},
		&cli.BoolFlag{Name: "e", Usage: "print error replies on stderr, at most one per second", Category: catOutput},
		&cli.DurationFlag{Name: "interval", Value: scheduler.DefaultInterval, Usage: fmt.Sprintf("cut each run into intervals of `DURATION` (at least %s)", minInterval), Category: catOutput},
	)
	for _, f := range diffFlags() {
		if n := f.Names()[0]; n != "json" {
			flags = append(flags, f)
		}
	}
	flags = append(flags, &cli.DurationFlag{Name: "decide-within", Usage: "with --max-regression: while a test's gate cannot decide after --rounds, run two more rounds (A B, B A) and look again, until it decides or the test has taken `DURATION` (its planned rounds included; 0: off); each later look at Bonferroni's level for the looks DURATION holds", Category: catTrust})
	flags = append(flags, lagLimitFlag("the lag is high: generator_behind when it is also at least 10% of the response p99 (a side so judged cannot tell)"), pacingFlag())
	flags = append(flags, measureFlags()...)
	flags = append(flags, tlsFlags()...)
	return withHelp(&cli.Command{
		Name:      "ab",
		Usage:     "compare two targets live: the same workload and rate, in rounds interleaved A B B A …, then diff's table and verdict",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Both targets get the same workload (every run workload flag), rate, arrivals and keys, one target at a\n" +
			"time, in rounds: A then B, B then A, A then B …, each run with its own warm-up, so that drift and the\n" +
			"client host's noise fall on both sides alike. --fill prefills both alike first. The rounds pair up:\n" +
			"each figure's change comes from the rounds' paired differences. TLS flags apply to each rediss://\n" +
			"side (or to both with --tls). --duet runs both sides of a round at once instead, on timelines started\n" +
			"together: on a noisy host it narrows the intervals several times over (docs/diff.md). Exit codes as\n" +
			"pacer diff's (--max-regression), 1 when a target was lost.",
		Flags:  flags,
		Action: abAction,
	},
		"pacer ab --a redis://127.0.0.1:6379 --b redis://127.0.0.1:6380 --rate 10k -t get -r 100000 --fill",
		"pacer ab --a redis://127.0.0.1:6379 --b rediss://:secret@127.0.0.1:6380 --cacert ca.pem --rate 5k -t set -d 1024 --max-regression 'p99:10%' --json ab.json",
	)
}

// abConfig is a validated pacer ab.
type abConfig struct {
	sides   [2]conn.Options
	shown   [2]string // each target as the output names it (password masked)
	cfg     ab.Config
	load    experiment.OpenLoad
	work    *workload
	quiet   bool
	errs    bool
	fill    bool
	json    string
	compare diffOutput
}

func parseABConfig(c *cli.Context) (*abConfig, error) {
	a := &abConfig{quiet: c.Bool("q"), errs: c.Bool("e"), fill: c.Bool("fill")}
	var err error
	if c.Args().Len() > 0 && c.IsSet("t") {
		return nil, usageErrorf("-t selects catalogue tests; it cannot be combined with a custom command")
	}
	if a.sides, a.shown, err = abTargets(c); err != nil {
		return nil, err
	}
	cfg := &a.cfg
	cfg.Rounds, cfg.RoundDuration, cfg.Warmup, cfg.Budget = c.Int("rounds"), c.Duration("round-duration"), c.Duration("warmup"), c.Duration("decide-within")
	cfg.Duet = c.Bool("duet")
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Conns, err = parseConns(c); err != nil {
		return nil, err
	}
	if cfg.Interval = c.Duration("interval"); cfg.Interval < minInterval {
		return nil, usageErrorf("--interval %s: want at least %s", cfg.Interval, minInterval)
	}
	cfg.Seed = parseSeed(c)
	if a.load, err = parseOpenLoad(c, cfg.Conns, verdict.SLO{}); err != nil {
		return nil, err
	}
	for s := range a.sides {
		a.sides[s].MaxInflight, a.sides[s].MaxBuffer = a.load.MaxInflight, a.load.MaxBuffer
	}
	if a.work, err = parseOpenWorkload(c, "catalogue tests"); err != nil {
		return nil, err
	}
	if err := experiment.CheckMaxBuffer(a.work.list(), a.load.MaxBuffer); err != nil {
		return nil, err
	}
	switch {
	case c.Bool("closed") && c.IsSet("rate"):
		return nil, usageErrorf("--closed runs as fast as the replies come (it compares throughput): give no --rate")
	case c.Bool("closed"):
		p, err := parsePipeline(c)
		if err != nil {
			return nil, err
		}
		if err := experiment.CheckClosedBudget(a.work.list(), cfg.Conns, p); err != nil {
			return nil, err
		}
		cfg.Closed = &ab.Closed{Pipeline: p}
	case !c.IsSet("rate"):
		return nil, usageErrorf("--rate is required (for example --rate 10k), or --closed")
	case c.IsSet("P"):
		return nil, usageErrorf("-P pipelines a closed loop: it needs --closed (an open loop sends each request at its time)")
	default:
		rate, err := timeline.ParseRate(c.String("rate"))
		if err != nil {
			return nil, usageErrorf("--rate: %v", err)
		}
		cfg.Open = &ab.Open{Rate: rate, Arrival: a.load.Arrival, Load: a.load}
	}
	if a.fill && a.work.opts.Keyspace == 0 {
		return nil, usageErrorf("--fill writes the keys of -r: give -r N")
	}
	if a.json = c.String("json"); c.IsSet("json") {
		if a.json == "" || a.json == stdoutPath {
			return nil, usageErrorf("--json %q: ab writes two documents, one per side: give a file name (ab.json writes ab.a.json and ab.b.json)", a.json)
		}
		for s := range 2 {
			if err := report.CheckOutputPath(ab.SidePath(a.json, s)); err != nil {
				return nil, usageErrorf("--json: %v", err)
			}
		}
	}
	vals := map[string]*string{"json": new(c.String("diff-json"))}
	if a.compare, err = diffSettings(c, vals); err != nil {
		return nil, err
	}
	if cfg.Budget > 0 && a.compare.opts.Gate.IsZero() {
		return nil, usageErrorf("--decide-within runs rounds until --max-regression's gate decides: give --max-regression too (for example 'p99:10%%')")
	}
	return a, nil
}

// abTargets reads --a and --b, each a URI with its own password and
// database; TLS (rediss://, or --tls for both) takes the TLS flags.
func abTargets(c *cli.Context) ([2]conn.Options, [2]string, error) {
	var out [2]conn.Options
	var shown [2]string
	var hosts [2]string
	var tlsOn [2]bool
	for s, name := range []string{"a", "b"} {
		u := c.String(name)
		if !c.IsSet(name) || strings.TrimSpace(u) == "" {
			return out, shown, usageErrorf("--%s URI is required: the %s target, e.g. redis://127.0.0.1:%d", name, [2]string{"baseline", "candidate"}[s], 6379+s)
		}
		o := conn.Options{Now: scheduler.Now}
		host, rediss, err := o.ApplyURI(u)
		if err != nil {
			// Its words name -u; the URI is not echoed (it may hold a
			// password).
			return out, shown, usageErrorf("--%s: want redis[s]://[user:password@]host[:port][/db]", name)
		}
		out[s], hosts[s], tlsOn[s] = o, host, rediss || c.Bool("tls")
		shown[s] = u
		if p, err := url.Parse(u); err == nil {
			shown[s] = p.Redacted()
		}
		shown[s] = secretsFrom(c.Context).Redact(shown[s])
	}
	for s := range out {
		if !tlsOn[s] && (tlsOn[0] || tlsOn[1]) {
			continue // the TLS flags are the other side's
		}
		var err error
		if out[s].TLS, err = parseTLS(c, hosts[s], tlsOn[s]); err != nil {
			return out, shown, err
		}
		out[s].FixedServerName = out[s].TLS != nil && c.IsSet("sni")
	}
	return out, shown, nil
}

func abAction(c *cli.Context) error {
	a, err := parseABConfig(c)
	if err != nil {
		return err
	}
	cfg := a.cfg
	mode := cfg.Mode()
	e, err := openEnv(c, envConfig{target: &endpoint.Target{Options: a.sides[ab.A]}, quiet: a.quiet, mode: mode})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	e.askServer()
	expA := e.experiment(a.errs)
	envs := [2]*experiment.Env{expA, ab.Other(ctx, expA, a.sides[ab.B], secretsFrom(ctx).Redact)}
	cfg.Tests = a.work.list()
	session := ab.Session(cfg.Seed, time.Now())
	if !a.quiet {
		for s, env := range envs {
			fmt.Fprintf(out, "%s: %s, %s\n", ab.SideName(s), a.shown[s], strings.TrimPrefix(text.ServerLine(env.Server.ID), "server: "))
		}
		fmt.Fprintf(out, "%s\n\n", cfg.Plan())
	}
	sides := [2]ab.Side{{Env: envs[0]}, {Env: envs[1]}}
	if a.fill {
		if err := abFill(ctx, out, sides, a); err != nil {
			return err
		}
	}
	labels := [2]string{ab.SideName(ab.A), ab.SideName(ab.B)}
	if a.json != "" {
		for s := range labels {
			labels[s] = filepath.Base(ab.SidePath(a.json, s))
		}
	}
	comparison := &ab.Comparison{Config: cfg, Sides: sides, Labels: labels, Targets: a.shown, Options: a.compare.opts,
		NewDoc: func(s int, interrupted bool) *report.Document {
			doc := report.NewDocument(mode, version, nil)
			doc.Server = envs[s].Server.ID
			doc.Interrupted = interrupted
			doc.Config = a.echo(ctx, s, session)
			return doc
		}}
	if !a.quiet {
		comparison.Each = func(r ab.Run) {
			t, _, err := verdict.NewTest(r.Result, report.TestOptions{}, verdict.SLO{})
			if err == nil {
				t.Name = ab.Label(r.Side, r.Round, cfg.Rounds) + " " + t.Name
				_ = text.Quiet(out, t, report.TextOptions{})
			}
		}
	}
	ended := comparison.Run(ctx)
	if ended.DocErr != nil {
		return failed(ended.DocErr)
	}
	if a.json != "" {
		for s, doc := range ended.Docs {
			if err := report.WriteJSON(c.App.Writer, ab.SidePath(a.json, s), doc); err != nil {
				return failed(err)
			}
		}
	}
	if !a.quiet {
		fmt.Fprintln(out)
	}
	var gate error
	if ended.DiffErr == nil {
		gate = writeDiff(out, c.App.ErrWriter, ended.Diff, a.compare)
	}
	if !a.quiet {
		printSeed(out, cfg.Seed)
	}
	switch end, err := ended.End(); end {
	case ab.Interrupted:
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "pacer: %s\n", oneLine(message(err)))
		}
		return exitCode(exitInterrupted)
	case ab.UsageError, ab.CompareFailed:
		return err
	case ab.Failed, ab.TargetLost:
		return failed(err)
	}
	return gate
}

// abFill prefills both targets alike (ab.Fill) and says how each went.
func abFill(ctx context.Context, out io.Writer, sides [2]ab.Side, a *abConfig) error {
	done, err := ab.Fill(ctx, sides, a.work.opts.Keyspace, a.work.opts.Sizes, a.cfg, func(s int, res *scheduler.Result) {
		if !a.quiet {
			fmt.Fprintf(out, "%s: filled %d keys (%s bytes each) in %.2f s\n", ab.SideName(s), res.Counts.Completed, a.work.opts.Sizes, res.Window.Seconds())
		}
	})
	var fe *ab.FillError
	switch {
	case errors.As(err, &fe):
		return failed(fmt.Errorf("--fill %s: %w", ab.SideName(fe.Side), fe.Err))
	case err != nil:
		return err
	case !done:
		return exitCode(exitInterrupted)
	}
	return nil
}

// echo is side s's config: the workload and load as run echoes them,
// with the comparison's own settings under "ab".
func (a *abConfig) echo(ctx context.Context, s int, session string) map[string]any {
	cfg := a.cfg
	extra := map[string]any{"ab": cfg.Echo(session, s, a.shown, a.fill)}
	rc := report.RunConfig{Target: a.sides[s].Addr, Conns: cfg.Conns, Dial: a.sides[s], Seed: cfg.Seed, Duration: cfg.RoundDuration}
	if cfg.Open != nil {
		rc.Rate = cfg.Open.Rate
		for k, v := range a.load.Echo(cfg.Warmup) {
			extra[k] = v
		}
		extra["arrival"] = cfg.Open.Arrival
	} else {
		rc.Pipeline = cfg.Closed.Pipeline
	}
	return echoWork(ctx, rc, a.work, extra)
}
