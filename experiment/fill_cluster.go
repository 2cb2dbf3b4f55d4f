package experiment

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
)

// fillPlan is fill --cluster's work: each primary writes its own keys
// (those whose slot it owns), over its own connections, all at once.
type fillPlan struct {
	top *cluster.Topology
	// part finds each key's primary, writing its tag first when the keys
	// hold "{tag}".
	part  cluster.Partition
	count []uint64 // keys per primary
}

// nodes are the primaries of the plan's slot map, as a run's nodes.
func (p *fillPlan) nodes() []scheduler.Node {
	out := make([]scheduler.Node, len(p.top.Primaries))
	for k, pr := range p.top.Primaries {
		out[k] = scheduler.Node{Addr: pr.Addr, ID: pr.ID, Slots: p.top.SlotsOf(k)}
	}
	return out
}

// planFill finds where each of the n keys goes, by running the fill's own
// key sequence once.
func planFill(ctx context.Context, tgt *endpoint.Target, recipe *scenarios.Recipe, n, seed uint64) (*fillPlan, error) {
	keys, err := endpoint.ClusterKeys(ctx, tgt.Options, recipe)
	if err != nil {
		return nil, err
	}
	specs := keys.Specs
	args := recipe.Args()[0]
	if specs[0].First <= 0 || specs[0].First >= len(args) {
		return nil, usage.Flagf("command", "fill {cluster}: {command} %q has no key", strings.Join(args, " "))
	}
	if strings.Contains(args[specs[0].First], scenarios.RandPlaceholder) {
		return nil, usage.Flagf("", "fill {cluster}: the key %q holds %s: use %s", args[specs[0].First], scenarios.RandPlaceholder, scenarios.KeyPlaceholder)
	}
	top, err := tgt.Discover(ctx)
	if err != nil {
		return nil, err
	}
	p := &fillPlan{top: top, part: cluster.Partition{Topology: top, Spec: specs[0], Tagged: keys.Tagged[0]}, count: make([]uint64, len(top.Primaries))}
	m, err := recipe.Build()
	if err != nil {
		return nil, usage.Errorf("%w", err)
	}
	s := scenarios.NewMixStream(m, seed, scenarios.NewSequential(n))
	for range n {
		cmd, _ := s.Next()
		o, slot, ok := p.part.Owner(cmd)
		if !ok {
			return nil, usage.Option("", "fill {cluster}: cannot find the key in %q", cmd)
		}
		if o < 0 {
			key, _ := conn.Arg(cmd, p.part.Spec.First)
			return nil, usage.Option("", "fill {cluster}: slot %d of %s has no primary", slot, key)
		}
		p.count[o]++
	}
	return p, nil
}

// nodeKeys is a fill stream that keeps the keys of one primary.
type nodeKeys struct {
	s    *scenarios.Stream
	plan *fillPlan
	node int
}

func (f *nodeKeys) Next() ([]byte, uint32) {
	for {
		cmd, kind := f.s.Next()
		o, _, ok := f.plan.part.Owner(cmd)
		if !ok || o == f.node {
			return cmd, kind
		}
	}
}

// fillCluster fills the keys of plan: per primary, cfg.Conns connections
// that write its keys only, every primary at once, each with base's
// settings. The result sums theirs and holds each as a node.
func fillCluster(ctx context.Context, o conn.Options, plan *fillPlan, cfg FillConfig, base closedloop.Config) (*scheduler.Result, error) {
	recipe, n, seed, conns := cfg.Recipe, cfg.Keys, cfg.Seed, cfg.Conns
	type part struct {
		node scheduler.Node
		k    int
		res  *scheduler.Result
		err  error
	}
	var parts []*part
	var dialed [][]*conn.Conn
	for k, pr := range plan.top.Primaries {
		if plan.count[k] == 0 {
			continue
		}
		po := o.ForAddr(pr.Addr) // its own host for TLS, unless --sni
		cs, err := conn.DialAll(ctx, po, conns)
		if err != nil {
			for _, d := range dialed {
				for _, c := range d {
					c.Close()
				}
			}
			return nil, fmt.Errorf("cannot connect to %s: %w", pr.Addr, err)
		}
		dialed = append(dialed, cs)
		parts = append(parts, &part{node: scheduler.Node{Addr: pr.Addr, ID: pr.ID, Slots: plan.top.SlotsOf(k)}, k: k})
	}
	var wg sync.WaitGroup
	for j, p := range parts {
		k := p.k
		keys := scenarios.NewSequential(n) // shared by the primary's connections
		pc := base
		pc.Requests = plan.count[k]
		var buildErr error
		var mu sync.Mutex
		pc.NewCommands = func(i int) scheduler.Commands {
			m, err := recipe.Build()
			if err != nil {
				mu.Lock()
				buildErr = err
				mu.Unlock()
				return nil
			}
			return &nodeKeys{s: scenarios.NewMixStream(m, seed+uint64(k*conns+i), keys), plan: plan, node: k}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.res, p.err = closedloop.Run(ctx, dialed[j], pc)
			mu.Lock()
			if p.err == nil && buildErr != nil {
				p.err = buildErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res := &scheduler.Result{Name: base.Name, Mode: "closed", Pipeline: base.Pipeline, ErrorCodes: map[string]uint64{}}
	var firstErr error
	var start, end int64
	for _, p := range parts {
		r := p.res
		if p.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", p.node.Addr, p.err)
		}
		if r == nil {
			continue
		}
		res.Connections += r.Connections
		res.Counts.Add(r.Counts)
		res.Response, _ = histo.Add(res.Response, r.Response)
		res.Micros, _ = histo.Add(res.Micros, r.Micros)
		for c, v := range r.ErrorCodes {
			res.ErrorCodes[c] += v
		}
		if res.FirstError == "" {
			res.FirstError = r.FirstError
		}
		res.Interrupted = res.Interrupted || r.Interrupted
		res.Clamped += r.Clamped
		res.Unsolicited += r.Unsolicited
		res.ClockErrors += r.ClockErrors
		if start == 0 || r.T0 < start {
			start = r.T0
		}
		end = max(end, r.T0+int64(r.Window))
		// A primary that answered nothing, or lost every connection, loses
		// the fill's target (the whole fill did not reach its keys).
		if r.TargetGone || r.Counts.Scheduled > 0 && r.Counts.Completed == 0 {
			res.TargetGone = true
			if res.FirstError == "" || !strings.HasPrefix(res.FirstError, p.node.Addr) {
				res.FirstError = p.node.Addr + ": " + r.FirstError
			}
		}
		res.Nodes = append(res.Nodes, scheduler.NodeResult{Node: p.node, Connections: r.Connections, Counts: r.Counts, Response: r.Response})
	}
	if len(res.Nodes) == 0 {
		return nil, firstErr
	}
	res.T0, res.Window = start, time.Duration(end-start)
	res.Service = res.Response
	return res, firstErr
}
