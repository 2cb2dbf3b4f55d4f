package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// ID is a replay's test id in the JSON.
const ID = "replay"

// Name is the name of the replay of the trace at path, in its result,
// its live view and metrics: "replay " and the file's name.
func Name(path string) string { return "replay " + filepath.Base(path) }

// Judge makes a replay's result a report test (id ID, with every
// percentile: a trace's commands are the user's), judged by slo as any run
// is (verdict.NewTest). What the server counted (st) goes with it, except
// in a Redis Cluster, where one server's counts are not the replay's.
func Judge(res *scheduler.Result, st *serverinfo.Stats, cfg Config, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	o := report.TestOptions{ID: ID, Percentiles: true}
	if !cfg.Cluster {
		o.Server = st
	}
	return verdict.NewTest(res, o, slo)
}

// Run replays the trace as plan says, with the open driver's settings
// ocfg (pacing, drain, lag limit, timeout, interval, backlog, warmup, and
// Duration or Requests to cut the measured part short; zero: the whole
// trace): connections per group (a database's, or a client's), the
// trace's timeline (this process's share of it, from its planned start),
// and the trace's commands.
func Run(ctx context.Context, env *experiment.Env, cfg Config, plan *Plan, name string, ocfg openloop.Config) (*scheduler.Result, *serverinfo.Stats, error) {
	if err := env.Place.Wait(ctx, env.WaitNotes()); err != nil {
		return nil, nil, nil
	}
	env.Target.TakeHandshakes()
	sh := &shared{x: newReader(&cfg, plan)}
	if env.Place.Sharded() {
		sh.k, sh.n = uint64(env.Place.K), uint64(env.Place.N)
	}
	opened := false
	whole := timeline.NewTrace(func() (timeline.TraceOffsets, error) {
		if !opened { // the pacer's walk: the reader the commands share
			opened = true
			return sh, nil
		}
		return offsets{newReader(&cfg, plan)}, nil
	}, plan.Requests)
	defer whole.Close()
	// Counted on a cursor of its own: the pacer's shares its reader with
	// the commands.
	counting := timeline.NewTrace(func() (timeline.TraceOffsets, error) { return offsets{newReader(&cfg, plan)}, nil }, plan.Requests)
	ocfg.Duration, ocfg.Requests = plan.bounds(counting, ocfg.Duration, ocfg.Requests, ocfg.Warmup)
	counting.Close()
	if ocfg.Rate.IsZero() {
		ocfg.Rate = timeline.RatePerSecond(plan.Summary.MeanRate * plan.Speed)
	}
	tl, err := env.Place.Timeline(whole)
	if err != nil {
		return nil, nil, usage.Flagf("shard", "{shard}: %v", err)
	}
	var conns []*conn.Conn
	since := func() *serverinfo.Stats { return nil }
	if env.Target.Cluster {
		keys := endpoint.Keys{Specs: plan.specsByKind(), Tagged: make([]bool, len(plan.Names))}
		if conns, ocfg.Cluster, err = env.Target.OpenCluster(ctx, cfg.Conns, keys, false); err != nil {
			return nil, nil, err
		}
		env.Topology(&ocfg, env.Target.Options.Addr, 0)
	} else {
		primary, epoch := env.Target.Primary()
		if conns, ocfg.Groups, err = dialGroups(ctx, env.Target, cfg, plan); err != nil {
			return nil, nil, err
		}
		since = env.Server.Mark(ctx)
		ocfg.RedialGroup = func(ctx context.Context, g int) (*conn.Conn, error) {
			o := env.Target.Current() // the primary of the moment, with sentinels
			o.DB = plan.dbs[g]
			o.OnTLSHandshake = nil
			return conn.Dial(ctx, o)
		}
		env.Topology(&ocfg, primary.Addr, epoch)
	}
	ocfg.Name, ocfg.Timeline, ocfg.CommandNames = name, tl, plan.Names
	ocfg.Start = env.Place.Instant()
	ocfg.OnErrorReply = env.OnErrorReply
	ocfg.HiccupInterval = env.HiccupInterval
	ocfg.ServerProcess = env.ServerProcess()
	if env.Watch != nil {
		var stop func()
		ocfg.OnStart, stop = env.Watch(experiment.Watched{Name: name, Test: name, Mode: "open", Label: name})
		defer stop()
	}
	res, err := openloop.Run(ctx, conns, commands{sh}, ocfg)
	env.Place.Started(res)
	if terr := whole.Err(); terr != nil && err == nil {
		err = fmt.Errorf("reading the trace: %w", terr)
	}
	if res == nil {
		return nil, nil, err
	}
	env.Finish(res)
	return res, since(), err
}

// bounds turns the measured part's bounds (zero: none) into the whole
// timeline's: the warmup comes first, -n counts the requests after it,
// and the trace's end bounds both (a request count of 0: the trace's
// own end).
func (p *Plan) bounds(tl timeline.Timeline, d time.Duration, n uint64, warmup time.Duration) (time.Duration, uint64) {
	if d > 0 {
		d += warmup
	} else {
		// The trace's span and a moment for its last request: the
		// timeline ends with its requests in any case.
		d = p.Span + warmup + time.Millisecond
	}
	if n > 0 && warmup > 0 {
		n += timeline.Count(tl, int64(warmup), p.Requests)
	}
	if n >= p.Requests {
		n = 0
	}
	return d, n
}

// dialGroups opens the connections of every group: one per client with
// PerClient, else Conns per database (at least one each), with the
// group's database selected.
func dialGroups(ctx context.Context, t *endpoint.Target, cfg Config, plan *Plan) ([]*conn.Conn, []int, error) {
	per := 1
	if !cfg.PerClient {
		per = max(1, cfg.Conns/max(1, len(plan.Groups)))
	}
	var conns []*conn.Conn
	var groups []int
	for g := range plan.Groups {
		o := t.Current()
		o.DB = plan.dbs[g]
		cs, err := t.Pool(ctx, o, per)
		if err != nil {
			endpoint.CloseAll(conns)
			return nil, nil, fmt.Errorf("%s: %w", plan.Groups[g], err)
		}
		for _, c := range cs {
			conns, groups = append(conns, c), append(groups, g)
		}
	}
	return conns, groups, nil
}

// specsByKind are the key positions of each kind's command, for cluster
// routing.
func (p *Plan) specsByKind() []cluster.KeySpec {
	out := make([]cluster.KeySpec, len(p.Names))
	for i, n := range p.Names {
		out[i], _ = cluster.KeyPositions(n)
	}
	return out
}
