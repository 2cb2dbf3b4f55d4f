package experiment

import (
	"context"
	"fmt"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/visibility"
)

// DialStandalone opens an open run's connections to a server that is no
// cluster: n to the primary (the one the sentinels name now, with the
// failovers followed so far: epoch) and, when cfg's reads go to replicas,
// n to each replica that is up, after them (cfg's Replicas, PerReplica
// and DialReplica set). nodes are the nodes whose counters tell the
// server side of a run: the primary and its replicas when reads go to
// them or sentinels may move the primary (nil otherwise: the server
// itself, Server.Mark).
func (e *Env) DialStandalone(ctx context.Context, cfg *openloop.Config, n int) (conns []*conn.Conn, primary string, epoch uint64, nodes []scheduler.Node, err error) {
	o, epoch := e.Target.Primary()
	if conns, err = e.Target.Pool(ctx, o, n); err != nil {
		return nil, "", 0, nil, err
	}
	reps, err := e.dialReplicas(ctx, cfg, n)
	if err != nil {
		endpoint.CloseAll(conns)
		return nil, "", 0, nil, err
	}
	conns = append(conns, reps...)
	if e.Target.Follower() != nil || len(cfg.Replicas) > 0 {
		nodes = []scheduler.Node{{Addr: o.Addr}}
		known, _ := e.Target.Replicas(ctx) // a failover's new primary is one of them
		for _, a := range known {
			nodes = append(nodes, scheduler.Node{Addr: a})
		}
	}
	return conns, o.Addr, epoch, nodes, nil
}

// markServer reads the server side's counters before a test: each of
// nodes' (a cluster's primaries, a primary and its replicas), or the
// server's without nodes.
func (e *Env) markServer(ctx context.Context, nodes []scheduler.Node) func() *serverinfo.Stats {
	if len(nodes) > 0 {
		return e.Server.MarkNodes(ctx, nodes)
	}
	return e.Server.Mark(ctx)
}

// dialReplicas opens n connections to each replica of the primary that is
// up, when cfg's reads go to replicas; none otherwise.
func (e *Env) dialReplicas(ctx context.Context, cfg *openloop.Config, n int) ([]*conn.Conn, error) {
	if cfg.ReadFrom == openloop.ReadPrimary {
		return nil, nil
	}
	addrs, err := e.Target.Replicas(ctx)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		if cfg.ReadFrom == openloop.ReadReplicas {
			return nil, usage.Flagf("read-from", "{read-from} replicas: the primary %s has no replica online", e.Target.Current().Addr)
		}
		if e.Say != nil {
			e.Say("pacer: --read-from prefer-replicas: the primary has no replica online; reads go to the primary")
		}
		return nil, nil
	}
	var conns []*conn.Conn
	for _, a := range addrs {
		cs, err := e.Target.Pool(ctx, e.Target.Options.ForAddr(a), n)
		if err != nil {
			endpoint.CloseAll(conns)
			return nil, fmt.Errorf("replica %s: %w", a, err)
		}
		conns = append(conns, cs...)
	}
	cfg.Replicas, cfg.PerReplica = addrs, n
	cfg.DialReplica = func(ctx context.Context, addr string) (*conn.Conn, error) {
		return conn.Dial(ctx, e.Target.Options.ForAddr(addr))
	}
	return conns, nil
}

// probe readies the visibility probes of a run at rate per second (nil
// for 0): on the primary and each replica that is up, begun with the
// run's timeline (cfg.Begin). A cluster, or a primary without replicas,
// is the user's error.
func (e *Env) probe(ctx context.Context, rate float64, cfg *openloop.Config) (*visibility.Prober, error) {
	if rate <= 0 {
		return nil, nil
	}
	if e.Target.Cluster {
		return nil, usage.Flagf("visibility", "{visibility}: probes are for a primary and its replicas, not a Redis Cluster")
	}
	reps, err := e.Target.Replicas(ctx)
	if err != nil {
		return nil, err
	}
	if len(reps) == 0 {
		return nil, usage.Flagf("visibility", "{visibility}: the primary %s has no replica online", e.Target.Current().Addr)
	}
	own := func(o conn.Options) conn.Options {
		o.OnTLSHandshake = nil // the probes' handshakes are not the load's
		return o
	}
	p, err := visibility.New(ctx, visibility.Config{Rate: rate, Replicas: reps, Interval: cfg.Interval, Now: scheduler.Now,
		Primary: func() conn.Options { return own(e.Target.Current()) },
		Replica: func(a string) conn.Options { return own(e.Target.Options.ForAddr(a)) }})
	if err != nil {
		return nil, err
	}
	cfg.Begin = p.Begin
	return p, nil
}
