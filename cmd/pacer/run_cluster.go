package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// openCluster is an open test's cluster set-up: -c connections per
// primary, dialed, and the scheduler's view (scheduler.OpenCluster).
type openCluster struct {
	conns []*conn.Conn
	cfg   *scheduler.OpenCluster
}

// clusterKeys says, per command of a recipe (kind order), where its keys
// are and whether they carry "{tag}". A command whose keys may fall in
// different slots is refused: every key must hold the same hash tag
// ("{tag}" counts: it is filled per request).
func clusterKeys(ctx context.Context, seed conn.Options, r *scenarios.Recipe) ([]cluster.KeySpec, []bool, error) {
	all := r.Args()
	var names []string
	for _, args := range all {
		if len(args) > 0 {
			names = append(names, args[0])
		}
	}
	if err := cluster.Learn(ctx, seed, names); err != nil {
		return nil, nil, usageErrorf("--cluster: %v", err)
	}
	specs := make([]cluster.KeySpec, len(all))
	tagged := make([]bool, len(all))
	for k, args := range all {
		if len(args) == 0 {
			continue // inline: PING
		}
		spec, ok := cluster.KeyPositions(args[0])
		if !ok {
			return nil, nil, usageErrorf("--cluster: %s: the server does not say where its keys are", strings.ToUpper(args[0]))
		}
		specs[k] = spec
		keys := keyArgs(args, spec)
		for _, key := range keys {
			if strings.Contains(key, scenarios.TagPlaceholder) {
				tagged[k] = true
			}
		}
		if len(keys) < 2 {
			continue
		}
		tag := string(cluster.HashTag([]byte(keys[0])))
		for _, key := range keys {
			t := string(cluster.HashTag([]byte(key)))
			if t == key || t != tag || strings.Contains(t, "__") {
				return nil, nil, usageErrorf("--cluster: %s keys may span slots (%s, %s); give them one {hash tag}, such as {tag}",
					strings.ToUpper(args[0]), keys[0], key)
			}
		}
	}
	return specs, tagged, nil
}

// needTags refuses a command of r with a key that does not carry "{tag}"
// (specs and tagged from clusterKeys), for who: a closed loop with
// --cluster sends each connection's requests to one primary, as
// redis-benchmark --cluster does, and only "{tag}" takes that primary's
// slots.
func needTags(r *scenarios.Recipe, specs []cluster.KeySpec, tagged []bool, who string) error {
	for k, args := range r.Args() {
		if specs[k].First > 0 && !tagged[k] {
			return usageErrorf("%s: %s has keys without {tag}: the closed loop sends each connection's requests to one primary, as redis-benchmark --cluster does; put {tag} in every key", who, strings.ToUpper(args[0]))
		}
	}
	return nil
}

// keyArgs returns the arguments of args that spec says are keys.
func keyArgs(args []string, spec cluster.KeySpec) []string {
	if spec.First <= 0 || spec.Step <= 0 {
		return nil
	}
	last := spec.Last
	if last < 0 {
		last += len(args)
	}
	var out []string
	for i := spec.First; i <= last && i < len(args); i += spec.Step {
		out = append(out, args[i])
	}
	return out
}

// dialCluster discovers the cluster from the seed and opens per
// connections to each primary that owns slots.
func dialCluster(ctx context.Context, seed conn.Options, per int, stderr io.Writer) (*openCluster, error) {
	top, err := discover(ctx, seed)
	if err != nil {
		return nil, err
	}
	oc := &scheduler.OpenCluster{PerNode: per, Topology: top}
	var conns []*conn.Conn
	closeAll := func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}
	for i, p := range top.Primaries {
		if top.SlotsOf(i) == 0 {
			continue
		}
		o := seed.ForAddr(p.Addr) // its own host for TLS, unless --sni
		cs, err := dialPool(ctx, o, per, stderr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("cluster node %s: %w", p.Addr, err)
		}
		oc.Nodes = append(oc.Nodes, scheduler.Node{Addr: p.Addr, ID: p.ID, Slots: top.SlotsOf(i)})
		conns = append(conns, cs...)
	}
	if len(oc.Nodes) == 0 {
		return nil, fmt.Errorf("cluster %s: no primary serves slots", seed.Addr)
	}
	if !top.Covered() {
		fmt.Fprintf(stderr, "pacer: warning: the cluster leaves slots without a primary; their requests fail\n")
	}
	// Redials, and the primaries that join the cluster during the run.
	oc.Dial = func(ctx context.Context, addr string) (*conn.Conn, error) {
		o := seed.ForAddr(addr)
		o.OnTLSHandshake = nil
		return conn.Dial(ctx, o)
	}
	oc.Refresh = func(ctx context.Context) (*cluster.Topology, error) {
		o := seed
		o.OnTLSHandshake = nil
		return discover(ctx, o)
	}
	return &openCluster{conns: conns, cfg: oc}, nil
}

// discover asks the seed for the slot map within the dial timeout.
func discover(ctx context.Context, seed conn.Options) (*cluster.Topology, error) {
	dctx, cancel := context.WithTimeout(ctx, seed.DialTimeout+conn.DefaultDialTimeout)
	defer cancel()
	top, err := cluster.Discover(dctx, seed)
	if err != nil {
		// bench's words (redis-benchmark's), in every command.
		return nil, failed(fmt.Errorf("Failed to fetch cluster configuration from %s: %v", seed.Addr, err))
	}
	return top, nil
}
