package openloop

import "github.com/pacer-load/pacer/scheduler"

// Per-node accounting of an open cluster run: what the pacer gave up on,
// per node, and each node's result.

// nodeTally is what the pacer counts for a node: requests it gave up on.
type nodeTally struct {
	errors, unsent uint64
}

// nodeResults sums the connections' and the pacer's counts per node.
func (run *openRun) nodeResults(p *pacer) []scheduler.NodeResult {
	cl := p.cl
	out := make([]scheduler.NodeResult, len(cl.members))
	for k, m := range cl.members {
		out[k].Node = m.Node
		out[k].Connections = cl.cfg.PerNode
		out[k].Response, out[k].Service, out[k].Receive = cl.nodeRec[k].Snapshot()
		out[k].Counts.Errors = cl.nodes[k].errors
		out[k].Counts.Unsent = cl.nodes[k].unsent
	}
	for _, s := range run.lanes {
		r := &out[s.node]
		h := s.h
		r.Counts.Sent += s.sent.Load()
		r.Counts.Completed += h.completed.Load()
		r.Counts.Errors += h.errors.Load() + s.left.errors
		r.Counts.Timeouts += s.left.timeouts
		r.Counts.Unsent += s.left.unsent
		r.Moved += h.moved.Load()
		r.Ask += h.ask.Load()
		r.Redirects += h.moved.Load() + h.ask.Load() + h.retries.Load()
	}
	for k := range out {
		c := &out[k].Counts
		c.Scheduled = c.Sent + c.Unsent
	}
	return out
}
