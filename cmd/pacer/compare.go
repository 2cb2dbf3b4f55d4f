package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
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
	})...)
	flags = append(append(flags, embeddedFlags()...), unsupportedFlags()...)
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
	target   conn.Options
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
}

func parseCompareConfig(c *cli.Context) (*compareConfig, error) {
	cfg := &compareConfig{}
	var err error
	if cfg.target, err = target(c); err != nil {
		return nil, err
	}
	if cfg.conns, err = parseConns(c); err != nil {
		return nil, err
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
	return cfg, nil
}

func compareAction(c *cli.Context) error {
	cfg, err := parseCompareConfig(c)
	if err != nil {
		return err
	}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	srv, stopEmbedded, err := startEmbedded(c, &cfg.target, nil)
	if err != nil {
		return err
	}
	defer stopEmbedded()
	out := stdout
	if cfg.jsonPath == "-" {
		out = stderr
	}
	where := cfg.target.Addr
	if srv != nil {
		where = fmt.Sprintf("embedded target (%s)", srv.Faults())
	}
	fmt.Fprintf(out, "pacer compare: %s, %d connections, closed-loop pipeline %d, %s per run, %s\n\n",
		cfg.title, cfg.conns, cfg.pipeline, cfg.duration, where)

	ctx := c.Context
	doc := &report.Document{Schema: report.Schema, Mode: "mixed", Tool: report.Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339), Config: cfg.echo(where), Tests: []report.Test{}}
	var runs []compareRun
	finish := func(runErr error) error {
		code := exitOK
		for _, r := range runs {
			redactResult(ctx, r.res)
			t, err := report.FromResult(r.res)
			if err != nil {
				return failed(err)
			}
			t.Name = r.label
			if r.res.Mode == "open" {
				// The SLO judges the open loop: the closed loop's numbers
				// are the ones that hide queueing.
				if t.SLO = cfg.output.slo.Check(r.res); t.SLO != nil && !t.SLO.Pass {
					code = worst(code, exitSLO)
				}
			}
			doc.Tests = append(doc.Tests, t)
		}
		doc.Interrupted = ctx.Err() != nil
		// Results reach the file before anything reaches stdout.
		if cfg.output.jsonPath != "" {
			if err := writeJSON(stdout, cfg.output.jsonPath, doc); err != nil {
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
		switch {
		case runErr != nil:
			return runErr
		case ctx.Err() != nil:
			return exitCode(exitInterrupted)
		}
		for _, r := range runs {
			code = worst(code, judge(stderr, r.res))
		}
		if code != exitOK {
			return exitCode(code)
		}
		return nil
	}

	closed, err := cfg.runClosed(ctx, stderr)
	if closed != nil {
		runs = append(runs, compareRun{label: cfg.title + " (closed loop)", res: closed})
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
		res, err := cfg.runOpen(ctx, rate, i, stderr)
		if res != nil {
			label := fmt.Sprintf("%s (open loop at %s req/s)", cfg.title, rate)
			runs = append(runs, compareRun{label: label, res: res, fraction: fractions[i]})
		}
		if err != nil || ctx.Err() != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

type compareRun struct {
	label    string
	res      *scheduler.Result
	fraction float64 // of the closed throughput, 0 when --rate was given
}

// roundRate keeps three significant digits, so rates read well.
func roundRate(perSec float64) scheduler.Rate {
	if perSec <= 0 {
		return scheduler.Rate{}
	}
	p := math.Pow(10, math.Floor(math.Log10(perSec))-2)
	return scheduler.RatePerSecond(math.Round(perSec/p) * p)
}

func (cfg *compareConfig) runClosed(ctx context.Context, stderr io.Writer) (*scheduler.Result, error) {
	conns, err := dialPool(ctx, cfg.target, cfg.conns, stderr)
	if err != nil {
		return nil, failed(err)
	}
	conns = liveConns(conns)
	var tplErr error
	live := make(chan *scheduler.Live, 1)
	stop := cfg.progress(stderr, "closed", live)
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
		OnStart:      func(l *scheduler.Live) { live <- l },
		OnErrorReply: errorsTo(stderr, cfg.output.showErrs),
	})
	stop()
	if tplErr != nil {
		return nil, usageErrorf("command: %v", tplErr)
	}
	if err != nil {
		return res, failed(err)
	}
	return res, nil
}

func (cfg *compareConfig) runOpen(ctx context.Context, rate scheduler.Rate, i int, stderr io.Writer) (*scheduler.Result, error) {
	conns, err := dialPool(ctx, cfg.target, cfg.conns, stderr)
	if err != nil {
		return nil, failed(err)
	}
	stream, err := cfg.work.stream(cfg.test, cfg.seed+uint64(1000+i))
	if err != nil {
		return nil, usageErrorf("command: %v", err)
	}
	var tl scheduler.Timeline = scheduler.Uniform{Rate: rate}
	if cfg.arrival == "poisson" {
		tl = scheduler.NewPoisson(rate, cfg.seed+uint64(i))
	}
	live := make(chan *scheduler.Live, 1)
	stop := cfg.progress(stderr, fmt.Sprintf("open %s/s", rate), live)
	res, err := scheduler.RunOpen(ctx, conns, stream, scheduler.OpenConfig{
		Name: cfg.title, Timeline: tl, Rate: rate, Duration: cfg.duration, Pacing: cfg.pacing, Drain: cfg.drain,
		CommandNames: cfg.test.names, Interval: cfg.output.interval,
		Timeout:      cfg.timeout,
		OnStart:      func(l *scheduler.Live) { live <- l },
		OnErrorReply: errorsTo(stderr, cfg.output.showErrs),
		Redial: func(ctx context.Context) (*conn.Conn, error) {
			return conn.Dial(ctx, cfg.target)
		},
	})
	stop()
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

func (cfg *compareConfig) echo(where string) map[string]any {
	m := map[string]any{"target": where, "connections": cfg.conns, "pipeline": cfg.pipeline,
		"duration_s": cfg.duration.Seconds(), "arrival": cfg.arrival, "max_buffer": cfg.target.MaxBuffer, "pacing": cfg.pacing.String(), "seed": cfg.seed, "test": cfg.title}
	if !cfg.rate.IsZero() {
		m["rate"] = cfg.rate.PerSecond()
	}
	return m
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
	row("p50", func(s histo.Summary) float64 { return s.P50 })
	row("p90", func(s histo.Summary) float64 { return s.P90 })
	row("p99", func(s histo.Summary) float64 { return s.P99 })
	row("p99.9", func(s histo.Summary) float64 { return s.P999 })
	row("max", func(s histo.Summary) float64 { return s.Max })
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
	b.WriteString("\n\n")
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

// reading is the one-sentence interpretation of the gap between the
// closed loop's p99 and the open loop's response p99.
func reading(closed *scheduler.Result, r compareRun) string {
	cp := histo.Summarize(closed.Response).P99
	op := histo.Summarize(r.res.Response).P99
	at := fmt.Sprintf("at %s req/s", r.res.TargetRate)
	if r.fraction > 0 {
		at += fmt.Sprintf(" (%.0f%% of the closed loop's throughput)", r.fraction*100)
	}
	var s string
	if op > 2*cp && op-cp > 1 {
		s = fmt.Sprintf("Closed-loop p99 (%.3f ms) hides %.1f ms of queueing %s: the open loop's response p99 is %.1f ms — coordinated omission.",
			cp, op-cp, at, op)
	} else {
		s = fmt.Sprintf("Open and closed loops agree %s: response p99 %.3f ms against the closed loop's %.3f ms — no hidden queueing at this rate.",
			at, op, cp)
	}
	if r.res.Verdict != scheduler.VerdictOK {
		s += " (The generator fell behind at this rate: " + r.res.VerdictReason + ".)"
	}
	return s
}
