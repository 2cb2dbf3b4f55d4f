package scheduler

import (
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/pacer-load/pacer/histo"
)

// Per-node intervals: a run with nodes (a cluster's, a primary and its
// replicas) cuts each node's response times into the test's intervals
// too, so a node's trouble shows when it happened. A node's intervals
// hold its response histogram and, as their count, its completions; they
// add up to the node's.

// maxNodeSeries bounds the nodes whose intervals a series keeps: past it
// (a cluster of hundreds of primaries) a node has none.
const maxNodeSeries = 64

// NodeRecorders are a node's response-time, service-time and receive-lag
// recorders, made at its first reply by the reader that reads it: the
// three cost about 800 KB, and a node that never answers (a primary that
// joined and could not be reached) needs none. The zero value has none
// yet.
type NodeRecorders struct{ p atomic.Pointer[NodeHists] }

// NodeHists are a node's recorders, in nanoseconds.
type NodeHists struct{ Response, Service, Receive *histo.Recorder }

// Get returns the node's recorders, making them on the first call.
func (n *NodeRecorders) Get() *NodeHists {
	if h := n.p.Load(); h != nil {
		return h
	}
	h := &NodeHists{histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()}
	if n.p.CompareAndSwap(nil, h) {
		return h
	}
	return n.p.Load()
}

// Made returns the node's recorders, nil until Get made them.
func (n *NodeRecorders) Made() *NodeHists { return n.p.Load() }

// Snapshot returns the node's histograms: nil when it recorded nothing.
func (n *NodeRecorders) Snapshot() (resp, serv, recv *hdrhistogram.Histogram) {
	h := n.p.Load()
	if h == nil {
		return nil, nil, nil
	}
	return h.Response.Snapshot(), h.Service.Snapshot(), h.Receive.Snapshot()
}

// nodeSeries is one node's part of a series.
type nodeSeries struct {
	rec   *NodeRecorders
	delta *histo.Delta // made when the node's recorders are
	out   []Interval
}

// takeNodes records each node's interval [start, start+dur): what its
// response recorder got since the last. Called with mu held.
func (s *Series) takeNodes(start, dur time.Duration) {
	if s.nodes == nil {
		return
	}
	recs := s.nodes()
	for k := range min(len(recs), maxNodeSeries) {
		if k == len(s.perNode) {
			s.perNode = append(s.perNode, &nodeSeries{rec: recs[k]})
		}
		ns := s.perNode[k]
		iv := Interval{Start: start, Duration: dur}
		if ns.delta == nil {
			if h := ns.rec.Made(); h != nil {
				ns.delta = histo.NewDeltaZero(h.Response)
			}
		}
		if ns.delta != nil {
			ns.delta.Take()
			p, err := s.pack(ns.delta)
			if err != nil && s.err == nil {
				s.err = err
			}
			iv.Response = p
			iv.Counts.Completed = uint64(p.Summary.Count)
		}
		ns.out = append(ns.out, iv)
	}
}

// NodeIntervals returns each node's intervals, by node index.
func (s *Series) NodeIntervals() [][]Interval {
	out := make([][]Interval, len(s.perNode))
	for k, ns := range s.perNode {
		out[k] = ns.out
	}
	return out
}
