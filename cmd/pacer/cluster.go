package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// clusterFlags is redis-benchmark's --cluster, which every load command
// accepts.
func clusterFlags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "cluster", Category: catTarget,
		Usage: "Redis Cluster: -h/-p is a seed; the slot map decides where each request goes (bench and sweep --closed: redis-benchmark's rule, client i on primary i mod N)"}}
}

// benchCluster is bench --cluster's view of the cluster: its primaries
// (those that own slots), which slots each owns, and a refresh of that map
// when the cluster redirects a request.
type benchCluster struct {
	seed   conn.Options
	stderr io.Writer
	nodes  []scheduler.Node
	// slots[k] lists the slots of nodes[k]; replaced whole on refresh.
	slots atomic.Pointer[[][]uint16]

	refreshing atomic.Bool
	pending    atomic.Bool // a redirect came after the last fetch began
	wg         sync.WaitGroup
	ctx        context.Context
}

// discoverCluster asks the seed for the topology, with redis-benchmark's
// words for what it refuses: a primary without slots is skipped with a
// warning, fewer than two primaries is an error.
func discoverCluster(ctx context.Context, seed conn.Options, stderr io.Writer, warn bool) (*benchCluster, error) {
	dctx, cancel := context.WithTimeout(ctx, seed.DialTimeout+conn.DefaultDialTimeout)
	defer cancel()
	top, err := cluster.Discover(dctx, seed)
	if err != nil {
		return nil, &exitError{code: exitFailed, raw: true,
			err: fmt.Errorf("Failed to fetch cluster configuration from %s: %v", seed.Addr, err)}
	}
	bc := &benchCluster{seed: seed, stderr: stderr, ctx: ctx}
	var lists [][]uint16
	for i, p := range top.Primaries {
		if top.SlotsOf(i) == 0 {
			if warn {
				fmt.Fprintf(stderr, "WARNING: Master node %s has no slots, skipping...\n", p.Addr)
			}
			continue
		}
		bc.nodes = append(bc.nodes, scheduler.Node{Addr: p.Addr, ID: p.ID, Slots: top.SlotsOf(i)})
		lists = append(lists, slotsOf(top, i))
	}
	if len(bc.nodes) <= 1 {
		return nil, &exitError{code: exitFailed, raw: true, err: fmt.Errorf("Invalid cluster: %d node(s).", len(bc.nodes))}
	}
	bc.slots.Store(&lists)
	return bc, nil
}

func slotsOf(top *cluster.Topology, i int) []uint16 {
	var out []uint16
	for s := range uint16(cluster.Slots) {
		if top.Owner(s) == i {
			out = append(out, s)
		}
	}
	return out
}

// nodeOptions are the seed's options for the primary at addr, which the
// cluster announces as host:port (also when the seed was a unix socket):
// over TLS its certificate is checked against its own host, unless --sni
// (conn.Options.ForAddr).
func (bc *benchCluster) nodeOptions(addr string) conn.Options {
	return bc.seed.ForAddr(addr)
}

// header is redis-benchmark's list of primaries, printed before the tests.
func (bc *benchCluster) header(w io.Writer) {
	fmt.Fprintf(w, "Cluster has %d master nodes:\n\n", len(bc.nodes))
	for i, n := range bc.nodes {
		fmt.Fprintf(w, "Master %d: %s %s\n", i, n.ID, n.Addr)
	}
	fmt.Fprintln(w)
}

// configs fetches each primary's save and appendonly for the full report.
func (bc *benchCluster) configs(ctx context.Context) []report.NodeConfig {
	out := make([]report.NodeConfig, len(bc.nodes))
	for i, n := range bc.nodes {
		o := bc.nodeOptions(n.Addr)
		o.OnTLSHandshake = nil
		cctx, cancel := context.WithTimeout(ctx, conn.DefaultDialTimeout)
		ans, err := conn.DoAll(cctx, o, []string{"CONFIG", "GET", "save"}, []string{"CONFIG", "GET", "appendonly"})
		cancel()
		if err != nil || len(ans) != 2 || ans[0].Err != nil || ans[1].Err != nil ||
			len(ans[0].Value.Elems) < 2 || len(ans[1].Value.Elems) < 2 {
			fmt.Fprintf(bc.stderr, "WARNING: Could not fetch node CONFIG %s\n", n.Addr)
			continue
		}
		out[i] = report.NodeConfig{HaveConfig: true, Save: ans[0].Value.Elems[1].Str, AppendOnly: ans[1].Value.Elems[1].Str}
	}
	return out
}

// dial opens clients connections, client i on primary i mod N
// (redis-benchmark's rule with its default of one thread per primary),
// and returns them with the primary of each.
func (bc *benchCluster) dial(ctx context.Context, clients int, stderr io.Writer) ([]*conn.Conn, []int, error) {
	n := len(bc.nodes)
	per := make([][]*conn.Conn, n)
	for k, node := range bc.nodes {
		want := clients / n
		if k < clients%n {
			want++
		}
		if want == 0 {
			continue
		}
		o := bc.nodeOptions(node.Addr)
		cs, err := dialBench(ctx, o, want, stderr)
		if err != nil {
			for _, l := range per {
				for _, c := range l {
					c.Close()
				}
			}
			return nil, nil, err
		}
		per[k] = cs
	}
	var conns []*conn.Conn
	var of []int
	for i := 0; ; i++ {
		k := i % n
		if i >= clients {
			break
		}
		if len(per[k]) == 0 {
			continue
		}
		conns, of = append(conns, per[k][0]), append(of, k)
		per[k] = per[k][1:]
	}
	return conns, of, nil
}

// closed is the scheduler's view for conns on primaries of: a random slot
// of the connection's primary per batch, and a refresh of the slot map
// after a redirect.
func (bc *benchCluster) closed(of []int, seed uint64) *scheduler.ClosedCluster {
	rngs := make([]*scenarios.Rand, len(of))
	for i := range rngs {
		rngs[i] = scenarios.NewRand(seed ^ uint64(i)*0x9E3779B97F4A7C15)
	}
	return &scheduler.ClosedCluster{
		Nodes: bc.nodes,
		Of:    of,
		Slot: func(i int) uint16 {
			s := (*bc.slots.Load())[of[i]]
			return s[rngs[i].Below(uint64(len(s)))]
		},
		OnRedirect: func([]byte) { bc.refresh() },
	}
}

// minRefresh spaces slot map refreshes: the redirects of requests already
// in flight do not each ask again.
const minRefresh = 100 * time.Millisecond

// refresh fetches the slot map again in the background, as redis-benchmark
// does after MOVED or ASK ("Cluster slots configuration changed"): one
// fetch at a time, at most one per minRefresh, and one more after the
// last redirect seen. Primaries it did not know get no connection; a known
// primary that lost every slot keeps its old list (its requests go on
// being redirected, and counted so).
func (bc *benchCluster) refresh() {
	bc.pending.Store(true)
	if !bc.refreshing.CompareAndSwap(false, true) {
		return
	}
	bc.wg.Add(1)
	go func() {
		defer bc.wg.Done()
		for {
			for bc.pending.Swap(false) {
				bc.fetch()
				select {
				case <-bc.ctx.Done():
				case <-time.After(minRefresh):
				}
			}
			bc.refreshing.Store(false)
			// A redirect between the last Swap and here found refreshing
			// set: take it over, unless another goroutine did.
			if !bc.pending.Load() || !bc.refreshing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// fetch replaces the slot lists by the seed's current map.
func (bc *benchCluster) fetch() {
	fmt.Fprintln(bc.stderr, "WARNING: Cluster slots configuration changed, fetching new one...")
	ctx, cancel := context.WithTimeout(bc.ctx, conn.DefaultDialTimeout)
	defer cancel()
	o := bc.seed
	o.OnTLSHandshake = nil
	top, err := cluster.Discover(ctx, o)
	if err != nil {
		fmt.Fprintf(bc.stderr, "Failed to update cluster slots configuration: %v\n", err)
		return
	}
	old := *bc.slots.Load()
	lists := make([][]uint16, len(bc.nodes))
	for k, n := range bc.nodes {
		lists[k] = old[k]
		if i := top.Index(n.Addr); i >= 0 && top.SlotsOf(i) > 0 {
			lists[k] = slotsOf(top, i)
		}
	}
	bc.slots.Store(&lists)
}

// wait waits for the refreshes in progress.
func (bc *benchCluster) wait() { bc.wg.Wait() }
