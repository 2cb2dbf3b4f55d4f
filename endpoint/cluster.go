package endpoint

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/scheduler/openloop"
)

// Discover asks the seed for the slot map within the dial timeout, failing
// in redis-benchmark's words (every command uses them).
func (t *Target) Discover(ctx context.Context) (*cluster.Topology, error) {
	seed := t.Options
	seed.OnTLSHandshake = nil // the map's handshakes are not the load's
	dctx, cancel := context.WithTimeout(ctx, seed.DialTimeout+conn.DefaultDialTimeout)
	defer cancel()
	top, err := cluster.Discover(dctx, seed)
	if err != nil {
		return nil, benchErrorf("Failed to fetch cluster configuration from %s: %v", seed.Addr, err)
	}
	return top, nil
}

// RouteKeys finds where a cluster routes the keys of r, refusing keys
// that may fall in different slots and, when closedLoop names the command,
// keys without {tag} (a closed loop sends each connection's requests to
// one primary). Outside a cluster there is nothing to find: the zero Keys.
func (t *Target) RouteKeys(ctx context.Context, r *scenarios.Recipe, closedLoop string) (Keys, error) {
	if !t.Cluster {
		return Keys{}, nil
	}
	keys, err := ClusterKeys(ctx, t.Options, r)
	if err != nil {
		return keys, err
	}
	if closedLoop != "" {
		if err := keys.NeedTags(r, closedLoop); err != nil {
			return keys, err
		}
	}
	return keys, nil
}

// OpenCluster discovers the cluster and opens per connections to each
// primary that owns slots, for an open run routed by slot with keys; with
// replicas, per connections to each of their replicas too (READONLY),
// which are the nodes after the primaries.
func (t *Target) OpenCluster(ctx context.Context, per int, keys Keys, replicas bool) ([]*conn.Conn, *openloop.Cluster, error) {
	top, err := t.Discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	seed := t.Options
	oc := &openloop.Cluster{PerNode: per, Topology: top, Keys: keys.Specs, Tagged: keys.Tagged, TagByKey: keys.TagByKey}
	var conns []*conn.Conn
	for i, p := range top.Primaries {
		if top.SlotsOf(i) == 0 {
			continue
		}
		cs, err := t.Pool(ctx, seed.ForAddr(p.Addr), per) // its own host for TLS, unless --sni
		if err != nil {
			CloseAll(conns)
			return nil, nil, fmt.Errorf("cluster node %s: %w", p.Addr, err)
		}
		oc.Nodes = append(oc.Nodes, scheduler.Node{Addr: p.Addr, ID: p.ID, Slots: top.SlotsOf(i), Role: scheduler.RolePrimary})
		conns = append(conns, cs...)
	}
	if len(oc.Nodes) == 0 {
		return nil, nil, fmt.Errorf("cluster %s: no primary serves slots", seed.Addr)
	}
	readOnly := map[string]bool{} // the replicas' addresses: their connections send READONLY
	if replicas {
		for i, p := range top.Primaries {
			if top.SlotsOf(i) == 0 {
				continue
			}
			for _, r := range p.Replicas {
				o := seed.ForAddr(r)
				o.ReadOnly = true
				cs, err := t.Pool(ctx, o, per)
				if err != nil {
					t.say("pacer: cluster replica %s of %s: %v; its primary's reads go elsewhere", r, p.Addr, err)
					continue
				}
				readOnly[r] = true
				oc.Nodes = append(oc.Nodes, scheduler.Node{Addr: r, Role: scheduler.RoleReplica, Primary: p.Addr})
				conns = append(conns, cs...)
			}
		}
	}
	if !top.Covered() {
		t.say("pacer: warning: the cluster leaves slots without a primary; their requests fail")
	}
	// Redials, and the primaries that join the cluster during the run.
	oc.Dial = func(ctx context.Context, addr string) (*conn.Conn, error) {
		o := seed.ForAddr(addr)
		o.OnTLSHandshake = nil
		o.ReadOnly = readOnly[addr]
		return conn.Dial(ctx, o)
	}
	oc.Refresh = t.Discover
	return conns, oc, nil
}

// Primaries is a closed loop's view of a cluster, redis-benchmark
// --cluster's: the primaries that own slots, which slots each owns, and a
// refresh of that map when the cluster redirects a request.
type Primaries struct {
	t     *Target
	Nodes []scheduler.Node
	// slots[k] lists the slots of Nodes[k]; replaced whole on refresh.
	slots   atomic.Pointer[[][]uint16]
	refresh cluster.Refresher
	ctx     context.Context
}

// Primaries asks the seed for the topology, with redis-benchmark's words
// for what it refuses: a primary without slots is skipped with a warning
// (with warn), fewer than two primaries is an error.
func (t *Target) Primaries(ctx context.Context, warn bool) (*Primaries, error) {
	top, err := t.Discover(ctx)
	if err != nil {
		return nil, err
	}
	p := &Primaries{t: t, ctx: ctx}
	p.refresh.Ctx, p.refresh.Fetch = ctx, p.fetch
	var lists [][]uint16
	for i, pr := range top.Primaries {
		if top.SlotsOf(i) == 0 {
			if warn {
				t.say("WARNING: Master node %s has no slots, skipping...", pr.Addr)
			}
			continue
		}
		p.Nodes = append(p.Nodes, scheduler.Node{Addr: pr.Addr, ID: pr.ID, Slots: top.SlotsOf(i)})
		lists = append(lists, top.SlotList(i))
	}
	if len(p.Nodes) <= 1 {
		return nil, benchErrorf("Invalid cluster: %d node(s).", len(p.Nodes))
	}
	p.slots.Store(&lists)
	return p, nil
}

// Header is redis-benchmark's list of primaries, printed before the tests.
func (p *Primaries) Header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Cluster has %d master nodes:\n\n", len(p.Nodes))
	for i, n := range p.Nodes {
		fmt.Fprintf(&b, "Master %d: %s %s\n", i, n.ID, n.Addr)
	}
	b.WriteString("\n")
	return b.String()
}

// Configs fetches each primary's save and appendonly for the full report.
func (p *Primaries) Configs(ctx context.Context) []peers.NodeConfig {
	out := make([]peers.NodeConfig, len(p.Nodes))
	for i, n := range p.Nodes {
		o := p.t.Options.ForAddr(n.Addr)
		o.OnTLSHandshake = nil
		cctx, cancel := context.WithTimeout(ctx, conn.DefaultDialTimeout)
		ans, err := conn.DoAll(cctx, o, []string{"CONFIG", "GET", "save"}, []string{"CONFIG", "GET", "appendonly"})
		cancel()
		if err != nil || len(ans) != 2 || ans[0].Err != nil || ans[1].Err != nil ||
			len(ans[0].Value.Elems) < 2 || len(ans[1].Value.Elems) < 2 {
			p.t.say("WARNING: Could not fetch node CONFIG %s", n.Addr)
			continue
		}
		out[i] = peers.NodeConfig{HaveConfig: true, Save: ans[0].Value.Elems[1].Str, AppendOnly: ans[1].Value.Elems[1].Str}
	}
	return out
}

// Dial opens clients connections, client i on primary i mod N
// (redis-benchmark's rule with its default of one thread per primary),
// and returns them with the primary of each.
func (p *Primaries) Dial(ctx context.Context, clients int) ([]*conn.Conn, []int, error) {
	n := len(p.Nodes)
	per := make([][]*conn.Conn, n)
	for k, node := range p.Nodes {
		want := clients / n
		if k < clients%n {
			want++
		}
		if want == 0 {
			continue
		}
		cs, err := p.t.BenchPool(ctx, p.t.Options.ForAddr(node.Addr), want)
		if err != nil {
			for _, l := range per {
				CloseAll(l)
			}
			return nil, nil, err
		}
		per[k] = cs
	}
	var conns []*conn.Conn
	var of []int
	for i := 0; i < clients; i++ {
		k := i % n
		if len(per[k]) == 0 {
			continue
		}
		conns, of = append(conns, per[k][0]), append(of, k)
		per[k] = per[k][1:]
	}
	return conns, of, nil
}

// Closed is the scheduler's view for conns on primaries of: a random slot
// of the connection's primary per batch, and a refresh of the slot map
// after a redirect.
func (p *Primaries) Closed(of []int, seed uint64) *closedloop.Cluster {
	rngs := make([]*scenarios.Rand, len(of))
	for i := range rngs {
		rngs[i] = scenarios.NewRand(seed ^ uint64(i)*0x9E3779B97F4A7C15)
	}
	return &closedloop.Cluster{
		Nodes: p.Nodes,
		Of:    of,
		Slot: func(i int) uint16 {
			s := (*p.slots.Load())[of[i]]
			return s[rngs[i].Below(uint64(len(s)))]
		},
		OnRedirect: func([]byte) { p.refresh.Redirected() },
	}
}

// fetch replaces the slot lists by the seed's current map, as
// redis-benchmark does after MOVED or ASK ("Cluster slots configuration
// changed"), when p.refresh decides (cluster.Refresher): a primary it did
// not know gets no connection, and a known primary that lost every slot
// keeps its old list (cluster.Refreshed).
func (p *Primaries) fetch() {
	p.t.say("WARNING: Cluster slots configuration changed, fetching new one...")
	ctx, cancel := context.WithTimeout(p.ctx, conn.DefaultDialTimeout)
	defer cancel()
	o := p.t.Options
	o.OnTLSHandshake = nil
	top, err := cluster.Discover(ctx, o)
	if err != nil {
		p.t.say("Failed to update cluster slots configuration: %v", err)
		return
	}
	addrs := make([]string, len(p.Nodes))
	for k, n := range p.Nodes {
		addrs[k] = n.Addr
	}
	lists := cluster.Refreshed(*p.slots.Load(), addrs, top)
	p.slots.Store(&lists)
}

// Wait waits for the refreshes in progress.
func (p *Primaries) Wait() { p.refresh.Wait() }
