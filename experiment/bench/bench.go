// Package bench runs pacer bench: redis-benchmark's closed loop over a
// list of tests, each once, --repeat times or round after round (-l),
// writing redis-benchmark's report of every run as it ends (full, -q or
// --csv, with its progress line on a terminal) and pacer's notes beside
// it. The program around it chooses the writers, writes the result
// document from Result.Tests and turns the judgements into an exit code.
package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Test is one test of the list.
type Test struct {
	experiment.Test
	// Custom is set for a command given after the flags: alone, it ends a
	// round without redis-benchmark's blank line.
	Custom bool
	// Payload is the data size the full report's header shows (Payload).
	Payload int
}

// Config is a validated pacer bench.
type Config struct {
	Tests                       []Test
	Clients, Requests, Pipeline int
	// Reconnect replaces a connection after every batch (-k 0).
	Reconnect bool
	Latency   closedloop.LatencyMode
	// Rate throttles the closed loop (zero: as fast as it goes).
	Rate      timeline.Rate
	Precision int
	Interval  time.Duration
	// ContinueOnError keeps going past error replies (-e).
	ContinueOnError bool
	// Seed draws the keys; every run draws its own from it.
	Seed uint64
	// Repeat is the runs of each test; Loop runs the list until
	// interrupted (not both).
	Repeat int
	Loop   bool
	// CI prints the confidence intervals of the percentiles.
	CI bool
	// Quiet and CSV are -q and --csv: redis-benchmark's terse formats.
	Quiet, CSV bool
	Text       report.TextOptions
	SLO        verdict.SLO
	// Primaries are a cluster's primaries (nil: one server).
	Primaries *endpoint.Primaries
	// Info is the full report's header; Run sets each test's data size.
	Info peers.BenchInfo
	// Keep keeps every test's runs pooled for Result.Tests (for the
	// result files); without it no run outlives its report.
	Keep bool
}

// Output is where a bench writes and what it tells the program.
type Output struct {
	// Out takes redis-benchmark's report, Err the server's side, the
	// verdicts and pacer's progress lines.
	Out, Err io.Writer
	// Terminal says Out is a terminal: redis-benchmark's progress line
	// is then redrawn on it (not with --csv).
	Terminal bool
	// Metrics, when not nil, hooks a run's live view to the metrics: it
	// gets the test's name and the hook to chain, as metrics.Exporter.Hook.
	Metrics func(test string, onStart func(*scheduler.Live)) (func(*scheduler.Live), func())
	// Judged sees every run's judgement, as it ends (nil: none).
	Judged func(*report.Test, verdict.Judgement)
}

// Result is how a bench ended.
type Result struct {
	// Err is the error that ended the runs (a connection lost, an error
	// reply without -e: experiment.IsErrorReply); nil when they all ran.
	Err error
	// Interrupted is set when the context ended the runs.
	Interrupted bool

	cfg  *Config
	runs []experiment.Runs
}

// Tests is each test's runs so far (with Config.Keep) as the result
// document's tests: pooled, judged as one, with the repeats' summary.
func (r *Result) Tests() ([]report.Test, error) {
	tests := []report.Test{}
	for i := range r.runs {
		j := r.cfg.Tests[i]
		t, _, err := r.runs[i].Test(r.cfg.title(j), report.TestOptions{ID: j.ID, Percentiles: true, CI: r.cfg.CI}, r.cfg.SLO)
		if err != nil {
			return nil, err
		}
		if t != nil {
			tests = append(tests, *t)
		}
	}
	return tests, nil
}

// Run runs the tests, writing each run's report as it ends. It returns
// an error when a report cannot be made or written; how the runs ended
// is in the Result, which is never nil.
func Run(ctx context.Context, env *experiment.Env, cfg Config, o Output) (*Result, error) {
	res := &Result{cfg: &cfg, runs: make([]experiment.Runs, len(cfg.Tests))}
	for i := range res.runs {
		res.runs[i].Keep = cfg.Repeat > 1
	}
	if cfg.CSV {
		if err := peers.BenchCSVHeader(o.Out, cfg.Text); err != nil {
			return res, err
		}
	}
	full := !cfg.Quiet && !cfg.CSV
	for round := 0; ; round++ {
		for i, j := range cfg.Tests {
			cfg.Info.DataSize = j.Payload
			var reps []*scheduler.Result
			for k := 0; k < cfg.Repeat; k++ {
				r, st, runErr := cfg.runOne(ctx, env, o, j, (round*len(cfg.Tests)+i)*cfg.Repeat+k)
				if st != nil && full && r != nil && !r.Interrupted && runErr == nil {
					fmt.Fprintln(o.Err, text.ServerBrief(st))
				}
				var t *report.Test
				var jd verdict.Judgement
				if r != nil {
					reps = append(reps, r)
					var err error
					if t, jd, err = verdict.NewTest(r, report.TestOptions{}, cfg.SLO); err != nil {
						return res, err
					}
					if t.SLO != nil {
						for _, l := range t.SLO.Lines() {
							fmt.Fprintf(o.Err, "%s: %s\n", safetext.Escape(cfg.title(j)), l)
						}
					}
					if cfg.Keep {
						res.runs[i].Add(r, st)
					}
				}
				if runErr != nil {
					res.Err = runErr
					return res, nil
				}
				if ctx.Err() != nil {
					res.Interrupted = true
					return res, nil
				}
				if o.Judged != nil {
					o.Judged(t, jd)
				}
			}
			if err := cfg.writeNotes(o, j, reps); err != nil {
				return res, err
			}
		}
		if !(len(cfg.Tests) == 1 && cfg.Tests[0].Custom) && !cfg.CSV {
			fmt.Fprint(o.Out, "\n")
		}
		if !cfg.Loop {
			return res, nil
		}
	}
}

// title labels a test in every output; a throttled loop says it is one.
func (cfg *Config) title(j Test) string {
	if cfg.Rate.IsZero() {
		return j.Title
	}
	return fmt.Sprintf("%s [closed loop at %s req/s]", j.Title, cfg.Rate)
}

// writeNotes writes, with --repeat, the median and min–max of a test's
// runs and, with --ci, the confidence intervals of its percentiles: on
// Out after redis-benchmark's report, on Err with -q and --csv so their
// formats stay as redis-benchmark's.
func (cfg *Config) writeNotes(o Output, j Test, reps []*scheduler.Result) error {
	if len(reps) == 0 || (cfg.Repeat == 1 && !cfg.CI) {
		return nil
	}
	w := o.Out
	if cfg.Quiet || cfg.CSV {
		w = o.Err
	}
	opts := report.TestOptions{Percentiles: true, CI: cfg.CI}
	if len(reps) > 1 {
		for _, r := range reps {
			opts.Runs = append(opts.Runs, r.Response)
		}
	}
	t, _, err := verdict.NewTest(scheduler.Pool(reps), opts, verdict.SLO{})
	if err != nil {
		return err
	}
	var rep *report.Repeats
	if cfg.Repeat > 1 {
		if rep, err = verdict.Repeats(reps, report.TestOptions{}, verdict.SLO{}); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s: %d runs\n", safetext.Escape(cfg.title(j)), len(reps)); err != nil {
			return err
		}
	}
	return text.WriteNotes(w, t, cfg.CI, rep)
}

// runOne runs test j once (the n-th run of the bench) and writes its
// report in redis-benchmark's format, returning what the server counted
// during it.
func (cfg *Config) runOne(ctx context.Context, env *experiment.Env, o Output, j Test, n int) (*scheduler.Result, *serverinfo.Stats, error) {
	title := cfg.title(j)
	seed := cfg.Seed + uint64(n)*1_000_003
	last := 0
	// redis-benchmark's progress line on a terminal; pacer's own
	// progress lines on Err otherwise (not with -q or --csv).
	bx := *env
	bx.Watch = func(w experiment.Watched) (func(*scheduler.Live), func()) {
		ch := make(chan *scheduler.Live, 1)
		stop := func() {}
		switch {
		case o.Terminal && !cfg.CSV:
			stop = progress(o.Out, title, ch, &last)
		case !cfg.Quiet && !cfg.CSV:
			stop = watch.Progress(watch.On(o.Err), title, ch)
		}
		send := func(l *scheduler.Live) { ch <- l }
		if o.Metrics == nil {
			return send, stop
		}
		onStart, end := o.Metrics(w.Test, send)
		return onStart, func() { end(); stop() }
	}
	res, st, err := bx.RunClosed(ctx, experiment.Closed{
		Test: j.Test, Name: title, Metric: title, Conns: cfg.Clients, Primaries: cfg.Primaries,
		Config: closedloop.Config{Requests: uint64(cfg.Requests), Pipeline: cfg.Pipeline, Latency: cfg.Latency,
			Rate: cfg.Rate, Precision: cfg.Precision, Interval: cfg.Interval, ContinueOnError: cfg.ContinueOnError},
		StreamSeed:  func(i int) uint64 { return seed + uint64(i) },
		ClusterSeed: cfg.Seed + uint64(n)*7_919,
		Reconnect:   cfg.Reconnect,
	})
	if res == nil || res.Interrupted || err != nil && !experiment.IsErrorReply(err) {
		return res, st, err
	}
	// redis-benchmark's output stays as it is: the handshakes go to Err
	// with the full report, as the server's side does.
	t, _, terr := verdict.NewTest(res, report.TestOptions{}, verdict.SLO{})
	if terr != nil {
		return res, st, terr
	}
	if line := text.TLSLine(t); line != "" && !cfg.Quiet && !cfg.CSV {
		fmt.Fprintf(o.Err, "tls: %s\n", line)
	}
	if err != nil {
		return res, st, err
	}
	switch {
	case cfg.CSV:
		err = peers.BenchCSV(o.Out, title, t, cfg.Text)
	case cfg.Quiet:
		err = peers.BenchQuiet(o.Out, title, t, last, cfg.Text)
		if err == nil {
			err = text.BenchCommands(o.Out, t, true, cfg.Text)
		}
	default:
		err = peers.BenchFull(o.Out, title, t, cfg.Info, last)
		if err == nil {
			err = text.BenchCommands(o.Out, t, false, cfg.Text)
		}
	}
	return res, st, err
}

// progress prints redis-benchmark's progress line every 250 ms until
// stopped, leaving in *last the length of the last line printed.
func progress(out io.Writer, title string, live <-chan *scheduler.Live, last *int) (stop func()) {
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
			n, err := peers.BenchProgress(out, title,
				float64(finished-prevDone)/(p.Elapsed-prevAt).Seconds(), float64(finished)/p.Elapsed.Seconds(),
				histo.CMean(interval)/1000, histo.CMean(now)/1000, *last)
			if err == nil {
				*last = n
			}
			prevDone, prevAt = finished, p.Elapsed
		}, nil)
}

// Payload is the data size the full report's header shows for a test:
// the value size (its mean when sizes vary) or, for a command given after
// the flags (custom), the encoded command's size, as redis-benchmark
// reports it.
func Payload(recipe *scenarios.Recipe, custom bool, sizes scenarios.Sizes, keys scenarios.KeyDist) int {
	if custom {
		if m, err := recipe.Build(); err == nil {
			s := scenarios.NewMixStream(m, 1, keys)
			b, _ := s.Next()
			return len(b)
		}
	}
	if n, fixed := sizes.Fixed(); fixed {
		return n
	}
	return int(sizes.Mean() + 0.5)
}

// FindPrimaries is --cluster: it asks target for the cluster's primaries
// (cfg.Primaries) and their CONFIG for the full report's header
// (cfg.Info.Cluster), and gives each primary a thread unless --threads
// was given, as redis-benchmark --cluster does. It returns the primaries'
// lines, which redis-benchmark prints first, in every output format.
func (cfg *Config) FindPrimaries(ctx context.Context, target *endpoint.Target) (string, error) {
	p, err := target.Primaries(ctx, true)
	if err != nil {
		return "", err
	}
	cfg.Primaries, cfg.Info.Cluster = p, p.Configs(ctx)
	if cfg.Info.Threads == 0 {
		cfg.Info.Threads = len(p.Nodes)
	}
	return p.Header(), nil
}

// ServerConfig is what redis-benchmark's header shows of the server's
// configuration: save and appendonly, when CONFIG GET gave both.
func ServerConfig(id *serverinfo.Identity) (save, aof string, ok bool) {
	save, ok1 := id.Config["save"]
	aof, ok2 := id.Config["appendonly"]
	return save, aof, ok1 && ok2
}

// Idle is -I: it opens the connections and waits until ctx ends, redrawing
// the count of clients on a terminal.
func Idle(ctx context.Context, t *endpoint.Target, clients int, out io.Writer, terminal bool) error {
	fmt.Fprintf(out, "Creating %d idle connections and waiting forever (Ctrl+C when done)\n", clients)
	conns, err := t.BenchPool(ctx, t.Current(), clients)
	if err != nil {
		return err
	}
	defer endpoint.CloseAll(conns)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if terminal {
				fmt.Fprintf(out, "clients: %d\r", len(conns))
			}
		}
	}
}
