package scheduler

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	// open run resends the request instead (see openloop.Cluster).
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

// Node roles.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

// Mover is a primary that may move: its address now, and how many times
// it moved.
type Mover interface {
	Primary() (addr string, epoch uint64)
}
