// Package compare runs one workload closed-loop (the redis-benchmark way)
// and then open-loop, at a given rate or at shares of the throughput the
// closed loop reached, and reads the gap between them: how much queueing
// the closed loop's percentiles hide (coordinated omission). It returns
// the runs as judged report tests, draws their side-by-side table (live
// or from a saved document) to an io.Writer and words the conclusion; it
// never prints.
//
// It runs through an experiment.Env and judges with package report; only
// the command (cmd/pacer) is above it.
package compare

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Fractions are the open-loop rates tried without a rate, as fractions of
// the throughput the closed loop reached.
var Fractions = []float64{0.5, 0.8, 0.95}

// Config is a comparison.
type Config struct {
	Test experiment.Test
	// Rate is the open loop's rate; zero: the Fractions of the closed
	// loop's throughput.
	Rate     timeline.Rate
	Duration time.Duration
	// Conns is the open loop's connections and, unless ClosedConns, the
	// closed loop's clients (a shard's share of them: its timeline is
	// shared, its clients split).
	Conns, ClosedConns int
	Pipeline           int
	Arrival            string
	Pacing             scheduler.Pacing
	LagLimit           time.Duration
	Drain, Timeout     time.Duration
	Interval           time.Duration
	Seed               uint64
	// SLO judges the open loops (the closed loop's numbers are the ones
	// that hide queueing).
	SLO verdict.SLO
	// Keys route the open loop's requests in a cluster.
	Keys endpoint.Keys
}

// Run is one run of a comparison: the closed loop first, then the open
// loops.
type Run struct {
	Label     string
	Test      *report.Test
	Judgement verdict.Judgement
	// Fraction is the share of the closed throughput the open loop ran at
	// (0 for the closed loop, or a given rate).
	Fraction float64
}

// closedLabel and openLabel name compare's runs, in the JSON and the
// metrics.
func closedLabel(title string) string { return title + " (closed loop)" }

// openLabel names the open loop at rate.
func openLabel(title string, rate timeline.Rate) string {
	return fmt.Sprintf("%s (open loop at %s req/s)", title, rate)
}

// Measure runs the closed loop, then the open loops, and returns every run
// that produced a result, judged (an interrupted or failed comparison
// returns what it measured with its error).
func Measure(ctx context.Context, env *experiment.Env, cfg Config) ([]Run, error) {
	var runs []Run
	add := func(label string, res *scheduler.Result, st *serverinfo.Stats, slo verdict.SLO, fraction float64) error {
		t, j, err := verdict.NewTest(res, report.TestOptions{ID: cfg.Test.ID, Server: st}, slo)
		if err != nil {
			return err
		}
		// Every run has the test's ID: mode and target_rate tell them apart.
		t.Name = label
		runs = append(runs, Run{Label: label, Test: t, Judgement: j, Fraction: fraction})
		return nil
	}
	closedConns := cfg.ClosedConns
	if closedConns == 0 {
		closedConns = cfg.Conns
	}
	c := experiment.Closed{
		Test: cfg.Test, Name: cfg.Test.Title, Label: "closed", Metric: closedLabel(cfg.Test.Title), Conns: closedConns,
		Config:     closedloop.Config{Duration: cfg.Duration, Pipeline: cfg.Pipeline, ContinueOnError: true, Interval: cfg.Interval},
		StreamSeed: func(i int) uint64 { return cfg.Seed + uint64(i) }, ClusterSeed: cfg.Seed, Placed: true,
	}
	if env.Target.Cluster {
		p, err := env.Target.Primaries(ctx, false)
		if err != nil {
			return nil, err
		}
		c.Primaries = p
	}
	closed, st, err := env.RunClosed(ctx, c)
	if closed != nil {
		if aerr := add(closedLabel(cfg.Test.Title), closed, st, verdict.SLO{}, 0); aerr != nil {
			return runs, aerr
		}
	}
	if err != nil || ctx.Err() != nil || closed == nil {
		return runs, err
	}
	rates, fractions := []timeline.Rate{cfg.Rate}, []float64{0}
	if cfg.Rate.IsZero() {
		rates, fractions = nil, nil
		for _, f := range Fractions {
			r := roundRate(closed.AchievedRate() * f)
			if r.IsZero() {
				return runs, fmt.Errorf("the closed loop completed %d requests: no throughput to take a fraction of", closed.Counts.Completed)
			}
			rates, fractions = append(rates, r), append(fractions, f)
		}
	}
	perNode := cfg.Conns
	if env.Target.Cluster {
		// The open loop opens ceil(c/N) connections to each primary.
		top, err := env.Target.Discover(ctx)
		if err != nil {
			return runs, err
		}
		n := 0
		for k := range top.Primaries {
			if top.SlotsOf(k) > 0 {
				n++
			}
		}
		perNode = (cfg.Conns + max(n, 1) - 1) / max(n, 1)
	}
	for i, rate := range rates {
		var tl timeline.Timeline = timeline.Uniform{Rate: rate}
		if cfg.Arrival == "poisson" {
			tl = timeline.NewPoisson(rate, cfg.Seed+uint64(i))
		}
		label := openLabel(cfg.Test.Title, rate)
		res, st, err := env.RunOpen(ctx, experiment.Open{
			Test: cfg.Test, Name: cfg.Test.Title, Label: fmt.Sprintf("open %s/s", rate), Timeline: tl,
			Conns: perNode, Keys: cfg.Keys, Seed: cfg.Seed + uint64(1000+i),
			Config: openloop.Config{Rate: rate, Duration: cfg.Duration, Pacing: cfg.Pacing, Drain: cfg.Drain,
				LagLimit: cfg.LagLimit, Timeout: cfg.Timeout, Interval: cfg.Interval},
			Metric: label,
		})
		if res != nil {
			if aerr := add(label, res, st, cfg.SLO, fractions[i]); aerr != nil {
				return runs, aerr
			}
		}
		if err != nil || ctx.Err() != nil || res == nil {
			return runs, err
		}
	}
	return runs, nil
}

// roundRate keeps three significant digits, so rates read well.
func roundRate(perSec float64) timeline.Rate {
	if perSec <= 0 {
		return timeline.Rate{}
	}
	p := math.Pow(10, math.Floor(math.Log10(perSec))-2)
	return timeline.RatePerSecond(math.Round(perSec/p) * p)
}

// ShardClients is the closed-loop clients of shard k of n (k from 1) in a
// comparison with conns clients: the closed loop has no timeline to
// share, its load is its clients, so the shards split them (ShareOf). A
// sharded comparison needs its open rate given (rateGiven): each shard
// would otherwise take it from its own closed loop's throughput, and the
// shards would send different timelines. Its errors are usage errors.
func ShardClients(conns, k, n int, rateGiven bool) (int, error) {
	if !rateGiven {
		return 0, usage.Flagf("shard", "{shard} needs {rate}: without it each shard would take its open rates from its own closed loop's throughput, and the shards would send different timelines")
	}
	c := ShareOf(conns, k, n)
	if c == 0 {
		return 0, usage.Flagf("shard", "{shard} %d/%d: {c} %d leaves this shard no closed-loop client; give at least {c} %d", k, n, conns, n)
	}
	return c, nil
}

// ShareOf is shard k's (from 1) share of n clients: every N-th of them,
// from the k-th.
func ShareOf(n, k, shards int) int {
	if k > n {
		return 0
	}
	return (n-k)/shards + 1
}
