package closedloop

import (
	"bytes"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// Cluster runs a closed loop against a Redis Cluster the way
// redis-benchmark --cluster does: each connection talks to one primary,
// and before every batch each "{tag}" in it becomes the hash tag of a slot
// of that primary, one slot per batch.
type Cluster struct {
	Nodes []scheduler.Node
	// Of is the index in Nodes of connection i's primary.
	Of []int
	// Slot returns a slot of connection i's primary, for its next batch:
	// called from connection i's goroutine only.
	Slot func(i int) uint16
	// OnRedirect, if set, sees every redirect (MOVED, ASK) or retryable
	// (CLUSTERDOWN, TRYAGAIN) reply, from the connection goroutines: the
	// slot map changed, refresh it. Such replies are errors that never
	// end the run.
	OnRedirect func(text []byte)
}

// tagPlaceholder is redis-benchmark's cluster hash tag.
var tagPlaceholder = []byte("{tag}")

// putTags gives every "{tag}" of batch the tag of slot.
func putTags(batch []byte, slot uint16) {
	for off := 0; ; {
		i := bytes.Index(batch[off:], tagPlaceholder)
		if i < 0 {
			return
		}
		cluster.PutTag(batch[off+i:off+i+len(tagPlaceholder)], slot)
		off += i + len(tagPlaceholder)
	}
}

// redirected reports whether an error reply is a cluster redirect or a
// retryable cluster state.
func redirected(text []byte) bool {
	if _, ok := cluster.ParseRedirect(text); ok {
		return true
	}
	return cluster.Retryable(text)
}

// nodeStats records one node's latencies during a closed run.
type nodeStats struct {
	latency, receive *histo.Recorder
}

// newNodeStats makes the recorders of the nodes that have a connection
// (c.Of): with fewer connections than primaries the others have none, and
// cost nothing (two recorders are about 540 KB).
func newNodeStats(c *Cluster) []nodeStats {
	if c == nil {
		return nil
	}
	ns := make([]nodeStats, len(c.Nodes))
	for _, k := range c.Of {
		if ns[k].latency == nil {
			ns[k].latency, ns[k].receive = histo.NewRecorder(), histo.NewRecorder()
		}
	}
	return ns
}

// nodeResults sums the workers' tallies per node.
func (run *closedRun) nodeResults() []scheduler.NodeResult {
	c := run.cfg.Cluster
	if c == nil {
		return nil
	}
	out := make([]scheduler.NodeResult, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i].Node = n
		if ns := run.nodes[i]; ns.latency != nil { // nil: no connection, no histograms
			out[i].Response = ns.latency.Snapshot()
			out[i].Service, out[i].Receive = out[i].Response, ns.receive.Snapshot()
		}
	}
	for _, w := range run.workers {
		r := &out[w.node]
		r.Connections++
		r.Counts.Sent += w.sent.Load()
		r.Counts.Completed += w.completed.Load()
		r.Counts.Errors += w.errors.Load() + w.lost
		r.Counts.Timeouts += w.timeouts
		r.Counts.Unsent += w.unsentClaimed
		r.Redirects += w.redirects
	}
	for i := range out {
		cnt := &out[i].Counts
		cnt.Scheduled = cnt.Sent + cnt.Unsent
	}
	return out
}
