// Package ab runs an A/B comparison live and fairly: two targets driven
// with the same workload, in rounds interleaved A B, B A, A B … (each
// round a pair of runs, one target at a time, the order alternating so
// that a drift within a pair falls on both sides alike), or with Duet
// both sides of a round at once on one timeline, each run with its own
// warm-up, after both sides were prefilled alike. Each side's runs
// become one test per workload whose runs are the rounds, which package
// diff pairs round by round.
//
// It runs through two experiment.Env, one per target, and never prints;
// only the command (cmd/pacer) is above it.
package ab

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Names of the sides.
const (
	A = 0
	B = 1
)

// SideName is "a" or "b".
func SideName(s int) string { return [2]string{"a", "b"}[s] }

// SidePath is the file side s's document is written to when both are
// asked for as path: the side's name before the extension (run.json:
// run.a.json and run.b.json), which users' scripts read back.
func SidePath(path string, s int) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + SideName(s) + ext
}

// Config is an interleaved comparison.
type Config struct {
	Tests []experiment.Test
	// Rounds is the number of A/B pairs; each side runs each test once a
	// round, for RoundDuration after Warmup (sent, not measured: an open
	// run's leading part of its timeline, a closed loop's own run first).
	Rounds        int
	RoundDuration time.Duration
	Warmup        time.Duration
	Conns         int
	// Seed draws each round's command stream and arrivals, the same for
	// both sides of a round.
	Seed     uint64
	Interval time.Duration
	// Open drives an open loop at a rate; nil: Closed's loop.
	Open   *Open
	Closed *Closed
	// Budget (--decide-within), when positive, is the most each test's
	// rounds may take, its planned Rounds included: while Measure's look
	// says its gate cannot decide, the test runs two rounds more (a pair
	// each way) and is looked at again (see Look).
	Budget time.Duration
	// Duet runs both sides of a round at once, their timelines started at
	// the same instant with the same arrivals and keys (duet
	// benchmarking; see duet.go): a stall of the client host delays both
	// sides' requests alike, and the round's paired difference cancels
	// it. Each side then shares the host with the other's load.
	Duet bool
}

// MaxRounds bounds Config.Rounds.
const MaxRounds = 1000

// Check refuses a session that cannot run: rounds outside 1 to MaxRounds,
// a round duration that is not positive, a negative warmup. Its errors are
// usage errors naming the settings.
func (c Config) Check() error {
	switch {
	case c.Rounds < 1 || c.Rounds > MaxRounds:
		return usage.Flagf("rounds", "{rounds} %d: want 1 to %d", c.Rounds, MaxRounds)
	case c.RoundDuration <= 0:
		return usage.Flagf("round-duration", "{round-duration} %s: want a positive duration such as 5s", c.RoundDuration)
	case c.Warmup < 0:
		return usage.Flagf("warmup", "{warmup} %s: must not be negative", c.Warmup)
	case c.Budget < 0:
		return usage.Flagf("decide-within", "{decide-within} %s: must not be negative", c.Budget)
	case c.Budget > 0 && c.Budget < time.Duration(c.Rounds)*c.roundTime():
		each := "each a run of both sides"
		if c.Duet {
			each = "each both sides at once"
		}
		return usage.Flagf("decide-within", "{decide-within} %s: the %d planned rounds take at least %s (%s, %s of warm-up and %s measured): give more, or fewer {rounds}",
			c.Budget, c.Rounds, time.Duration(c.Rounds)*c.roundTime(), each, c.Warmup, c.RoundDuration)
	}
	return nil
}

// roundTime is the least a round takes: both sides' warm-up and
// measured run, one after the other or, in a duet, at once.
func (c Config) roundTime() time.Duration {
	if c.Duet {
		return c.Warmup + c.RoundDuration
	}
	return 2 * (c.Warmup + c.RoundDuration)
}

// Open is the open loop of every run.
type Open struct {
	Rate    timeline.Rate
	Arrival string
	Load    experiment.OpenLoad
}

// Closed is the closed loop of every run (redis-benchmark's: -c
// connections each keeping a batch of Pipeline in flight).
type Closed struct {
	Pipeline int
}

// Side is one target and what routes its requests.
type Side struct {
	Env *experiment.Env
	// Keys route each test's requests in a cluster (nil or zero: not one).
	Keys []endpoint.Keys
}

// Order is the sides of pair i in the order they run: A then B for even
// pairs, B then A for odd ones (A B B A A B …).
func Order(i int) [2]int {
	if i%2 == 0 {
		return [2]int{A, B}
	}
	return [2]int{B, A}
}

// OrderText is the sequence of runs of n pairs: "ABBAAB…".
func OrderText(n int) string {
	var b []byte
	for i := range n {
		for _, s := range Order(i) {
			b = append(b, "AB"[s])
		}
	}
	return string(b)
}

// Run is one run of one side: test Test of round Round.
type Run struct {
	Test, Round, Side int
	Result            *scheduler.Result
	Server            *serverinfo.Stats
}

// Result is what the rounds measured: for each side and test the runs,
// pooled with each kept (report.Repeats), and how the rounds ended.
type Result struct {
	Runs [2][]*experiment.Runs
	// Decide is, for each test, how it used the budget (nil without
	// one, and for a test that never reached its first look).
	Decide []*diff.Decide
	// Interrupted: ctx ended, or a run was interrupted; Err is the error
	// a run ended with. The runs before either are kept.
	Interrupted bool
	Err         error
}

// Measure runs every test's rounds, one test after another, both sides
// of a round back to back (with Duet, at once); each, when not nil, sees
// every run as it ends (a duet's A then B once both ended).
// With a Budget, look judges a test after its planned rounds and then
// after every two more (see Look): true ends the test's rounds (its gate
// decided); while it says false, two rounds more run as long as the
// budget holds them, at the pace the rounds have kept so far.
func Measure(ctx context.Context, sides [2]Side, cfg Config, each func(Run), look func(*Result, Look) bool) *Result {
	r := &Result{Decide: make([]*diff.Decide, len(cfg.Tests))}
	for s := range sides {
		for range cfg.Tests {
			r.Runs[s] = append(r.Runs[s], &experiment.Runs{Keep: cfg.Rounds > 1})
		}
	}
	for ti, test := range cfg.Tests {
		start := time.Now()
		rounds := cfg.Rounds
		var planned int // looks the budget holds, foreseen at the first
		for round := 0; round < rounds; round++ {
			var runs [2]sideRun
			if cfg.Duet {
				runs = duet(ctx, sides, cfg, ti, test, round)
			} else {
				for _, s := range Order(round) {
					runs[s] = sides[s].run(ctx, cfg, ti, test, round, s, nil)
					if !runs[s].ok(ctx) {
						break
					}
				}
			}
			order := Order(round) // the order they ran in; a duet's: A then B
			if cfg.Duet {
				order = [2]int{A, B}
			}
			for _, s := range order {
				sr := runs[s]
				if sr.res != nil {
					r.Runs[s][ti].Add(sr.res, sr.st)
					if each != nil {
						each(Run{Test: ti, Round: round, Side: s, Result: sr.res, Server: sr.st})
					}
				}
			}
			for _, s := range order {
				if runs[s].err != nil {
					r.Err = runs[s].err
					return r
				}
			}
			if !runs[A].ok(ctx) || !runs[B].ok(ctx) {
				r.Interrupted = true
				return r
			}
			if cfg.Budget <= 0 || look == nil || round+1 < rounds {
				continue
			}
			elapsed := time.Since(start)
			pair := 2 * elapsed / time.Duration(round+1) // two rounds at the pace so far
			if planned == 0 {
				planned = 1 + max(0, int((cfg.Budget-elapsed)/max(pair, 1)))
			}
			l := Look{Test: ti, Rounds: round + 1, N: 1 + (round+1-cfg.Rounds)/2, Planned: planned}
			l.Level = LookLevel(l.N, planned)
			decided := look(r, l)
			dec := &diff.Decide{BudgetS: cfg.Budget.Seconds(), Rounds: l.Rounds, PlannedRounds: cfg.Rounds, Looks: l.N,
				PlannedLooks: planned, Level: l.Level, Decided: decided, By: "sequential"}
			switch {
			case decided && l.N == 1:
				dec.By = "first look"
			case !decided:
				dec.By = "budget"
			}
			r.Decide[ti] = dec
			if !decided && l.N < planned && elapsed+pair <= cfg.Budget {
				rounds += 2
			}
		}
	}
	return r
}

// Look is one look at a test of a session with a budget: after its
// planned rounds (the first, N 1) and after every two rounds more
// (Rounds so far), of the Planned looks the budget holds.
type Look struct {
	Test, Rounds int
	N, Planned   int
	// Level is the confidence the look's intervals are at (LookLevel).
	Level float64
}

// LookLevel is the confidence of look n of planned: the ordinary 95% at
// the first (what the planned rounds alone would have said), and at each
// later one 95% spent over the looks the budget holds (stats.Bonferroni),
// so that looking again while the gate cannot decide does not look until
// the answer suits: the chance of a wrong decision at a later look stays
// under 5% in all (measured by simulation: TestLooksSimulated).
func LookLevel(n, planned int) float64 {
	if n <= 1 {
		return stats.Level
	}
	return stats.Bonferroni(stats.Level, planned)
}

// Label is what a run's progress lines call it: "a 2/6", and "a 8/6+"
// for a round past the planned ones (--decide-within).
func Label(s, round, rounds int) string {
	if round >= rounds {
		return fmt.Sprintf("%s %d/%d+", SideName(s), round+1, rounds) // a round the budget added
	}
	return fmt.Sprintf("%s %d/%d", SideName(s), round+1, rounds)
}

// sideRun is how one side's run of a round ended.
type sideRun struct {
	res *scheduler.Result
	st  *serverinfo.Stats
	err error
}

// ok says the run ended as planned: a result, neither interrupted nor
// failed, ctx still live.
func (sr sideRun) ok(ctx context.Context) bool {
	return sr.err == nil && sr.res != nil && !sr.res.Interrupted && ctx.Err() == nil
}

// run is one side's run of a test in a round. With meet (a duet), each
// part the run sends (a closed loop's warm-up, then its measured run; an
// open run's timeline) starts at the instant meet gives both sides.
func (sd Side) run(ctx context.Context, cfg Config, ti int, test experiment.Test, round, s int, meet *meeting) sideRun {
	seed := cfg.Seed + uint64(ti)<<32 + uint64(round)
	label := Label(s, round, cfg.Rounds)
	var keys endpoint.Keys
	if ti < len(sd.Keys) {
		keys = sd.Keys[ti]
	}
	// env is the side's environment for one part: in a duet, placed at
	// the instant both sides meet, or nil when ctx ended first.
	env := func() *experiment.Env {
		if meet == nil {
			return sd.Env
		}
		return meet.place(ctx, sd.Env)
	}
	if o := cfg.Open; o != nil {
		shape := experiment.Shape{Rate: o.Rate, Duration: cfg.RoundDuration, Warmup: cfg.Warmup}
		tl := shape.Timeline(o.Arrival, seed)
		oc := o.Load.Open(cfg.Interval)
		oc.Rate, oc.Warmup = o.Rate, cfg.Warmup
		oc.Duration, oc.Requests = shape.Bounds(tl)
		e := env()
		if e == nil {
			return sideRun{}
		}
		res, st, err := e.RunOpen(ctx, experiment.Open{Test: test, Name: test.Title, Label: label, Metric: test.Title,
			Timeline: tl, Conns: cfg.Conns, Keys: keys, Seed: seed, Config: oc})
		return sideRun{res, st, err}
	}
	closed := func(d time.Duration, label string) sideRun {
		e := env()
		if e == nil {
			return sideRun{}
		}
		res, st, err := e.RunClosed(ctx, experiment.Closed{Test: test, Name: test.Title, Label: label, Metric: test.Title, Conns: cfg.Conns,
			Config:     closedloop.Config{Duration: d, Pipeline: cfg.Closed.Pipeline, ContinueOnError: true, Interval: cfg.Interval},
			StreamSeed: func(i int) uint64 { return seed + uint64(i)<<16 }, Placed: meet != nil})
		return sideRun{res, st, err}
	}
	if cfg.Warmup > 0 {
		// The closed loop has no timeline to lead in with: a run of its
		// own, dropped, warms the connections and the server.
		if w := closed(cfg.Warmup, label+" warm-up"); !w.ok(ctx) {
			return sideRun{err: w.err}
		}
	}
	return closed(cfg.RoundDuration, label)
}

// Tests are each side's tests for its document: a test's rounds pooled,
// each round kept as a run (report.Repeats), judged with o (its ID set
// per test).
func (r *Result) Tests(s int, tests []experiment.Test, o report.TestOptions) ([]report.Test, []verdict.Judgement, error) {
	var out []report.Test
	var js []verdict.Judgement
	for ti, runs := range r.Runs[s] {
		if runs.Len() == 0 {
			continue
		}
		o.ID = tests[ti].ID
		t, j, err := runs.Test(tests[ti].Title, o, verdict.SLO{})
		if err != nil {
			return nil, nil, err
		}
		out, js = append(out, *t), append(js, j)
	}
	return out, js, nil
}

// Other is side B's environment beside side A's, a: the same settings
// (live views, redaction, hiccups), with its own target dialled with o
// (on a's receive clock, its TLS handshakes recorded) and its own server,
// asked who it is now, outside any measured window; redact masks the
// passwords in what it says.
func Other(ctx context.Context, a *experiment.Env, o conn.Options, redact func(string) string) *experiment.Env {
	o.ReceiveClock = a.Target.Options.ReceiveClock
	t := &endpoint.Target{Options: o, Say: a.Say}
	t.WatchTLS()
	b := *a
	b.Target, b.Server = t, endpoint.AskServer(ctx, t.Options, a.Say, redact)
	return &b
}
