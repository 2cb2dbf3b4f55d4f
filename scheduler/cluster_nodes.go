package scheduler

import (
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pacer-load/pacer/histo"
)

// Per-node accounting of an open cluster run: what the pacer gave up on,
// per node, and each node's result.

// nodeRecorders are a node's response-time, service-time and receive-lag
// recorders, made at its first reply by the reader that reads it: the
// three cost about 800 KB, and a node that never answers (a primary that
// joined and could not be reached) needs none.
type nodeRecorders struct{ p atomic.Pointer[nodeHists] }

type nodeHists struct{ resp, serv, recv *histo.Recorder }

// get returns the node's recorders, making them on the first call.
func (n *nodeRecorders) get() *nodeHists {
	if h := n.p.Load(); h != nil {
		return h
	}
	h := &nodeHists{histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()}
	if n.p.CompareAndSwap(nil, h) {
		return h
	}
	return n.p.Load()
}

// snapshot returns the node's histograms: nil when it recorded nothing.
func (n *nodeRecorders) snapshot() (resp, serv, recv *hdrhistogram.Histogram) {
	h := n.p.Load()
	if h == nil {
		return nil, nil, nil
	}
	return h.resp.Snapshot(), h.serv.Snapshot(), h.recv.Snapshot()
}

// nodeTally is what the pacer counts for a node: requests it gave up on.
type nodeTally struct {
	errors, unsent uint64
}

// nodeResults sums the connections' and the pacer's counts per node.
func (run *openRun) nodeResults(p *pacer) []NodeResult {
	cl := p.cl
	out := make([]NodeResult, len(cl.members))
	for k, m := range cl.members {
		out[k].Node = m.Node
		out[k].Connections = cl.cfg.PerNode
		out[k].Response, out[k].Service, out[k].Receive = cl.nodeRec[k].snapshot()
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
