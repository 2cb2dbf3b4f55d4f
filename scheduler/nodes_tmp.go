package scheduler

// TEMPORARY: ccore's scheduler/nodes.go types, until h/ccore commits them
// (then this file is deleted at the merge). Moved and Ask are crun's.

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

// Node names one primary of a Redis Cluster in a run's configuration.
type Node struct {
	Addr, ID string
	// Slots is how many hash slots it owned when the run started.
	Slots int
}

// NodeResult is one cluster primary's share of a test. Its counts and
// histogram add up, over the nodes, to the test's.
type NodeResult struct {
	Node
	// Connections is how many of the test's connections talked to it.
	Connections int
	Counts      Counts
	// Redirects counts its -MOVED, -ASK, -CLUSTERDOWN and -TRYAGAIN
	// replies (also counted in Counts.Errors).
	Redirects uint64
	// Moved and Ask count its -MOVED and -ASK replies (open runs).
	Moved, Ask uint64
	Response   *hdrhistogram.Histogram
}
