package stream

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
)

// control asks the server what the run needs outside the load: the
// streams and groups made fresh before it, their pending entries
// (XPENDING) at every interval, and the groups removed after it. Each
// ask is a connection of its own (conn.DoAll), on the node that owns the
// stream's slot in a cluster.
type control struct {
	cfg *Config
	o   conn.Options
	// node[s] is the options reaching stream s's node.
	node []conn.Options
}

func newControl(ctx context.Context, cfg *Config, o conn.Options, top *cluster.Topology) (*control, error) {
	c := &control{cfg: cfg, o: o, node: make([]conn.Options, cfg.Streams)}
	for s := range c.node {
		c.node[s] = o
		if top != nil {
			n := top.Owner(cluster.Slot([]byte(cfg.key(s))))
			if n < 0 {
				return nil, fmt.Errorf("no primary serves the slot of stream %s", cfg.key(s))
			}
			c.node[s] = o.ForAddr(top.Primaries[n].Addr)
		}
	}
	return c, nil
}

// perNode runs cmds(s) for every stream, grouped by node, and returns
// the answers by stream.
func (c *control) perNode(ctx context.Context, cmds func(s int) [][]string) ([][]conn.Answer, error) {
	byNode := map[string][]int{}
	var order []string
	for s := range c.node {
		a := c.node[s].Addr
		if _, ok := byNode[a]; !ok {
			order = append(order, a)
		}
		byNode[a] = append(byNode[a], s)
	}
	out := make([][]conn.Answer, len(c.node))
	for _, a := range order {
		var all [][]string
		var of []int // stream of each command
		for _, s := range byNode[a] {
			for _, cmd := range cmds(s) {
				all = append(all, cmd)
				of = append(of, s)
			}
		}
		answers, err := conn.DoAll(ctx, c.node[byNode[a][0]], all...)
		if err != nil {
			return nil, err
		}
		for i, ans := range answers {
			out[of[i]] = append(out[of[i]], ans)
		}
	}
	return out, nil
}

// setup makes the streams and groups fresh: without shards, each stream
// is deleted first (it is pacer's, by its name); each group is destroyed
// and made again at the stream's end ($), so that it reads only this run's
// entries.
func (c *control) setup(ctx context.Context) error {
	answers, err := c.perNode(ctx, func(s int) [][]string {
		var cmds [][]string
		if c.cfg.Shard == 0 {
			cmds = append(cmds, []string{"DEL", c.cfg.key(s)})
		}
		for g := range c.cfg.Groups {
			cmds = append(cmds, []string{"XGROUP", "DESTROY", c.cfg.key(s), c.cfg.group(g)},
				[]string{"XGROUP", "CREATE", c.cfg.key(s), c.cfg.group(g), "$", "MKSTREAM"})
		}
		return cmds
	})
	if err != nil {
		return fmt.Errorf("setting up the streams: %w", err)
	}
	for s, as := range answers {
		for i, a := range as {
			create := c.cfg.Shard == 0 && i > 0 && i%2 == 0 || c.cfg.Shard != 0 && i%2 == 1
			if a.Err != nil && create {
				return fmt.Errorf("XGROUP CREATE %s: %v", c.cfg.key(s), a.Err)
			}
		}
	}
	return nil
}

// poll reads every group's pending entries at every interval until ctx
// ends, keeping the most of any group in pending.
func (c *control) poll(ctx context.Context, every time.Duration, pending *atomic.Int64) {
	if every <= 0 {
		every = time.Second
	}
	pending.Store(-1)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		answers, err := c.perNode(ctx, func(s int) [][]string {
			cmds := make([][]string, c.cfg.Groups)
			for g := range cmds {
				cmds[g] = []string{"XPENDING", c.cfg.key(s), c.cfg.group(g)}
			}
			return cmds
		})
		if err != nil {
			continue // a stall or a lost node: the next interval asks again
		}
		per := make([]int64, c.cfg.Groups)
		for _, as := range answers {
			for g, a := range as {
				if a.Err == nil && len(a.Value.Elems) > 0 && g < len(per) {
					per[g] += a.Value.Elems[0].Int
				}
			}
		}
		most := int64(0)
		for _, n := range per {
			most = max(most, n)
		}
		pending.Store(most)
	}
}

// close removes the run's groups, and without shards its streams: what
// it made (with shards another may still read them).
func (c *control) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.perNode(ctx, func(s int) [][]string {
		if c.cfg.Shard == 0 {
			return [][]string{{"DEL", c.cfg.key(s)}}
		}
		cmds := make([][]string, c.cfg.Groups)
		for g := range cmds {
			cmds[g] = []string{"XGROUP", "DESTROY", c.cfg.key(s), c.cfg.group(g)}
		}
		return cmds
	})
}
