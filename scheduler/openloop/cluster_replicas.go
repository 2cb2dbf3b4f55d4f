package openloop

import (
	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/scheduler"
)

// Reads from a cluster's replicas (Topology.ReadFrom): the run's nodes
// after the primaries are replicas (scheduler.Node.Role, scheduler.Node.Primary), whose
// connections were opened with READONLY. A read is routed by its slot to
// the slot's primary and from there to one of that primary's replicas in
// turn; preferring replicas, to the primary when none of them has a
// connection with room now. Keyless commands go round the primaries only.
// A refreshed slot map names the replicas of each primary again.

// readReplica is where a command of kind routed to node goes: one of its
// replicas when reads go to them and kind reads, else node itself.
func (p *pacer) readReplica(node int, kind uint32) int {
	cl := p.cl
	run := p.run
	if run.cfg.ReadFrom == ReadPrimary || node >= len(cl.replicas) || len(cl.replicas[node]) == 0 {
		return node
	}
	if k := int(kind & kindMask); k >= len(run.cfg.Reads) || !run.cfg.Reads[k] {
		return node
	}
	reps := cl.replicas[node]
	i, tried, ok := cluster.InTurn(len(reps), cl.rrRep[node], func(i int) bool {
		r := reps[i]
		if m := &cl.members[r]; m.joining || m.down {
			return false
		}
		return run.cfg.ReadFrom != PreferReplicas || p.roomIn(r)
	})
	cl.rrRep[node] += tried
	if ok {
		return reps[i]
	}
	if run.cfg.ReadFrom == ReadReplicas {
		return reps[0] // it waits in the replica's queue
	}
	return node
}

// roomIn reports whether a connection of node k can take a request now
// and nothing waits for its node.
func (p *pacer) roomIn(k int) bool {
	if p.cl.waits[k].len() > 0 {
		return false
	}
	per := p.cl.cfg.PerNode
	for i := k * per; i < (k+1)*per; i++ {
		if c := p.run.lanes[i].c; c != nil && !c.Dead() && c.Free() > 0 {
			return true
		}
	}
	return false
}

// linkReplicas names each primary member's replica members: from the
// run's nodes (scheduler.Node.Primary) at the start.
func (cl *clusterRun) linkReplicas() {
	cl.replicas = make([][]int, len(cl.members))
	cl.rrRep = make([]int, len(cl.members))
	for r, m := range cl.members {
		if m.Role != scheduler.RoleReplica {
			continue
		}
		if k := cl.node(m.Primary); k >= 0 {
			cl.replicas[k] = append(cl.replicas[k], r)
		}
	}
}

// relinkReplicas names the replicas anew from a refreshed map t: the
// replica members each primary of t lists (replicas that were not in
// the run's first map are not dialed).
func (cl *clusterRun) relinkReplicas(primaries []string, replicas [][]string) {
	for len(cl.replicas) < len(cl.members) {
		cl.replicas = append(cl.replicas, nil)
		cl.rrRep = append(cl.rrRep, 0)
	}
	for i, addr := range primaries {
		k := cl.node(addr)
		if k < 0 {
			continue
		}
		var reps []int
		for _, ra := range replicas[i] {
			if r := cl.node(ra); r >= 0 && cl.members[r].Role == scheduler.RoleReplica {
				reps = append(reps, r)
			}
		}
		cl.replicas[k] = reps
	}
}
