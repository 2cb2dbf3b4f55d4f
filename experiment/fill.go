package experiment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/verdict"
)

// FillConfig is a prefill: every key of 0 … Keys-1 written once, with
// pipelined commands in a closed loop, so that read workloads hit.
type FillConfig struct {
	// Recipe is the one command each key is written with; its key
	// placeholder runs through 0 … Keys-1, once between all connections.
	Recipe *scenarios.Recipe
	Keys   uint64
	// Seed draws the values (connection i's stream is drawn with Seed+i;
	// in a cluster, connection i of primary k with Seed+k*Conns+i).
	Seed uint64
	// Conns is the connections to open (to each primary in a cluster),
	// Pipeline the commands each keeps in flight.
	Conns, Pipeline int
	// Interval is the results' interval (closedloop.Config's).
	Interval time.Duration
	// ContinueOnError goes on after an error reply; without it the first
	// ends the fill.
	ContinueOnError bool
}

// FillCommand is the template a fill writes its keys with by default;
// ClusterFillCommand is the default with --cluster: the keys of the
// catalogue's tests in a cluster ("key:{tag}:000000000042", the tag taken
// from the key's name as an open run takes it), so a filled cluster is
// read back.
const (
	FillCommand        = "SET key:__key__ __data__"
	ClusterFillCommand = "SET key:{tag}:__key__ __data__"
)

// FillTemplate is the template a fill uses: the one given (set), or the
// default for a cluster or a server.
func FillTemplate(given string, set, cluster bool) string {
	switch {
	case set:
		return given
	case cluster:
		return ClusterFillCommand
	}
	return FillCommand
}

// FillRecipe is the recipe of a fill that writes keys keys with
// template (--command), values drawn from sizes: the template must hold
// the key placeholder, or every key would be the same. Its errors are
// usage errors.
func FillRecipe(template string, keys uint64, sizes scenarios.Sizes) (*scenarios.Recipe, error) {
	custom, err := scenarios.ParseCustom(template)
	if err != nil {
		return nil, usage.Flagf("command", "{command}: %v", err)
	}
	if !strings.Contains(strings.Join(custom.Args, " "), scenarios.KeyPlaceholder) {
		return nil, usage.Flagf("command", "{command} %q has no %s: every key would be the same", template, scenarios.KeyPlaceholder)
	}
	r, err := scenarios.BuildRecipe("", []scenarios.Custom{custom}, scenarios.Options{Sizes: sizes, Keyspace: keys})
	if err != nil {
		return nil, usage.Errorf("%w", err)
	}
	return r, nil
}

// NewFill is the fill of keys keys written with template (FillTemplate's),
// values drawn from sizes, over conns connections of pipeline commands
// each: its recipe (FillRecipe), held to the closed loop's in-flight
// budget (CheckClosedBudget). Its errors are usage errors.
func NewFill(template string, keys uint64, sizes scenarios.Sizes, conns, pipeline int) (FillConfig, error) {
	r, err := FillRecipe(template, keys, sizes)
	if err != nil {
		return FillConfig{}, err
	}
	if err := CheckClosedBudget([]Test{{Title: FillID, Recipe: r}}, conns, pipeline); err != nil {
		return FillConfig{}, err
	}
	return FillConfig{Recipe: r, Keys: keys, Conns: conns, Pipeline: pipeline}, nil
}

// RunConfig is what a fill's result document says of its run (report's
// config): the target's dial options, the connections, pipeline and value
// sizes, the keys 0 … Keys-1 written once each in order, and the seed.
func (f FillConfig) RunConfig(dial conn.Options, sizes scenarios.Sizes) report.RunConfig {
	return report.RunConfig{
		Target: dial.Addr, Conns: f.Conns, Dial: dial, Pipeline: f.Pipeline, Sizes: sizes, Keyspace: f.Keys,
		KeyDist: scenarios.NewSequential(f.Keys), Seed: f.Seed, Tests: []string{FillID}, Requests: f.Keys,
	}
}

// Judge makes a fill's result a report test (id FillID), with what the
// server counted (st), judged by slo as any run is (verdict.NewTest).
func (f *Fill) Judge(res *scheduler.Result, st *serverinfo.Stats, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	return verdict.NewTest(res, report.TestOptions{ID: FillID, Server: st}, slo)
}

// Fill is a prefill made ready by PlanFill: planned, then dialed, then run.
type Fill struct {
	e     *Env
	cfg   FillConfig
	plan  *fillPlan    // a cluster's: which primary writes which keys
	conns []*conn.Conn // a single server's, once dialed
	epoch uint64       // the failovers followed when they were (sentinels)
}

// fillName is the fill's name in its result, its live view and metrics;
// FillID its test's id in the JSON.
const (
	fillName = "fill"
	FillID   = "fill"
)

// PlanFill readies a fill of Env's target. For a Redis Cluster it finds
// which primary owns each key by running the fill's own key sequence once
// (asking the seed for the slot map); a command whose key cannot be
// routed is a usage error. Nothing is dialed for a single server.
func (e *Env) PlanFill(ctx context.Context, cfg FillConfig) (*Fill, error) {
	f := &Fill{e: e, cfg: cfg}
	if e.Target.Cluster {
		var err error
		if f.plan, err = planFill(ctx, e.Target, cfg.Recipe, cfg.Keys, cfg.Seed); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Dial opens a single server's connections, all of them or none; Run
// dials if this was not done. A cluster's primaries open theirs when Run
// starts, so for a cluster it does nothing.
func (f *Fill) Dial(ctx context.Context) error {
	if f.plan != nil || f.conns != nil {
		return nil
	}
	primary, epoch := f.e.Target.Primary()
	cs, err := conn.DialAll(ctx, primary, f.cfg.Conns)
	if err != nil {
		return fmt.Errorf("cannot connect: %w", err)
	}
	f.conns, f.epoch = cs, epoch
	return nil
}

// Run fills and returns the result, with what the server counted
// meanwhile (Env.Server; nil without it). A cluster's result sums its
// primaries' and holds each one's in Nodes, and so do the server's
// counts (every primary's keys, not the seed's: Server.MarkNodes). Each
// primary writes its own keys, so a cluster's fill is not watched
// (Env.Watch): there is no one progress to show. An error with a result
// is the first of a run that stopped (an error reply, a lost connection,
// a primary lost).
func (f *Fill) Run(ctx context.Context) (*scheduler.Result, *serverinfo.Stats, error) {
	e, cfg := f.e, f.cfg
	var since func() *serverinfo.Stats
	if f.plan != nil {
		since = e.Server.MarkNodes(ctx, f.plan.nodes()) // what every primary holds, not the seed
	} else {
		since = e.Server.Mark(ctx)
	}
	var res *scheduler.Result
	var err, buildErr error
	if f.plan != nil {
		res, err = fillCluster(ctx, e.Target.Options, f.plan, cfg, f.closedConfig())
	} else {
		if err := f.Dial(ctx); err != nil {
			return nil, nil, err
		}
		keys := scenarios.NewSequential(cfg.Keys) // shared: the connections cover 0 … N-1 once between them
		closed := f.closedConfig()
		closed.Requests = cfg.Keys
		if fl := e.Target.Follower(); fl != nil { // a failover: the fill goes on with the new primary
			closed.Follow, closed.FollowEpoch, closed.Redial = fl, f.epoch, e.Target.Redial
		}
		closed.NewCommands = func(i int) scheduler.Commands {
			m, err := cfg.Recipe.Build()
			if err != nil {
				buildErr = err
				return nil
			}
			return scenarios.NewMixStream(m, cfg.Seed+uint64(i), keys)
		}
		var stop func()
		closed.OnStart, stop = e.watch(Watched{Name: fillName, Test: fillName, Mode: "closed", Label: fillName})
		res, err = closedloop.Run(ctx, f.conns, closed)
		stop()
	}
	e.Finish(res)
	var st *serverinfo.Stats
	if res != nil {
		st = since()
	}
	if buildErr != nil {
		return nil, nil, usage.Errorf("%w", buildErr)
	}
	return res, st, err
}

// closedConfig is the driver's settings every part of the fill shares.
func (f *Fill) closedConfig() closedloop.Config {
	return closedloop.Config{
		Name: fillName, Pipeline: f.cfg.Pipeline, Interval: f.cfg.Interval,
		ContinueOnError: f.cfg.ContinueOnError,
		OnErrorReply:    f.e.OnErrorReply,
	}
}

// Fill plans, dials and runs a prefill at once (PlanFill, Fill.Dial,
// Fill.Run).
func (e *Env) Fill(ctx context.Context, cfg FillConfig) (*scheduler.Result, *serverinfo.Stats, error) {
	f, err := e.PlanFill(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := f.Dial(ctx); err != nil {
		return nil, nil, err
	}
	return f.Run(ctx)
}
