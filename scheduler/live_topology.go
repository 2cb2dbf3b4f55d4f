package scheduler

import (
	"sync/atomic"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
)

// What a running test shows of its topology, for live metrics: its
// nodes with their roles and response-time recorders, the events so far
// with their windows as they stand, and the replicas' visibility lag
// (set by whoever runs the probes beside it).

// LiveNode is a node of a running test: its address, role and response
// times (nil until it answered).
type LiveNode struct {
	Addr, Role string
	Response   *histo.Recorder
}

// liveTopology is the Live view's part for the topology.
type liveTopology struct {
	nodes      func() []LiveNode
	events     func() []events.Event
	visibility atomic.Pointer[func() map[string]*histo.Recorder]
}

// Nodes returns the test's nodes now (a cluster's, a primary and its
// replicas); nil for a test of one server.
func (l *Live) Nodes() []LiveNode {
	if l.topo.nodes == nil {
		return nil
	}
	return l.topo.nodes()
}

// Events returns the test's topology events so far, their windows as
// they stand (instants on the run's clock); nil without events.
func (l *Live) Events() []events.Event {
	if l.topo.events == nil {
		return nil
	}
	return l.topo.events()
}

// SetVisibility makes f the source of the replicas' visibility lag
// recorders, by address (package visibility's Prober.Lags).
func (l *Live) SetVisibility(f func() map[string]*histo.Recorder) { l.topo.visibility.Store(&f) }

// Visibility returns the replicas' visibility lag recorders, nil without
// probes.
func (l *Live) Visibility() map[string]*histo.Recorder {
	if f := l.topo.visibility.Load(); f != nil {
		return (*f)()
	}
	return nil
}
