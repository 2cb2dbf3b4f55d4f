package scheduler

import (
	"bytes"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/histo"
)

// Node names one primary of a Redis Cluster in a run's configuration.
type Node struct {
	Addr, ID string
	// Slots is how many hash slots it owned when the run started.
	Slots int
	// Joined says it was not in the slot map when the run started: an
	// open run added it when a redirect or a refreshed map named it (the
	// cluster scaled out), with Slots 0.
	Joined bool
	// Role is RolePrimary or RoleReplica (a node that served as both, a
	// replica promoted during the run, is a primary); empty in closed runs.
	Role string
	// Primary is, for a cluster's replica, its primary's address.
	Primary string
}

// NodeResult is one cluster primary's share of a test. Its counts and
// histogram add up, over the nodes, to the test's.
type NodeResult struct {
	Node
	// Connections is how many of the test's connections talked to it.
	Connections int
	Counts      Counts
	// Redirects counts its -MOVED, -ASK, -CLUSTERDOWN and -TRYAGAIN
	// replies: in a closed run they are also counted in Counts.Errors; an
	// open run resends the request instead (see OpenCluster).
	Redirects uint64
	// Moved and Ask count its -MOVED and -ASK replies (open runs).
	Moved, Ask uint64
	// Response, Service and Receive are its requests' response time,
	// service time and receive lag (a closed run's Service is its
	// Response).
	Response, Service, Receive *hdrhistogram.Histogram
	// Intervals are its response times in each of the test's intervals
	// (open runs, the first 64 nodes): Response and, as Counts.Completed,
	// how many completed in it.
	Intervals []Interval
}

// ClosedCluster runs a closed loop against a Redis Cluster the way
// redis-benchmark --cluster does: each connection talks to one primary,
// and before every batch each "{tag}" in it becomes the hash tag of a slot
// of that primary, one slot per batch.
type ClosedCluster struct {
	Nodes []Node
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
func newNodeStats(c *ClosedCluster) []nodeStats {
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
func (run *closedRun) nodeResults() []NodeResult {
	c := run.cfg.Cluster
	if c == nil {
		return nil
	}
	out := make([]NodeResult, len(c.Nodes))
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
