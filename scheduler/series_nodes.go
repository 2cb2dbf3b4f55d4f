package scheduler

import (
	"time"

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

// nodeSeries is one node's part of a series.
type nodeSeries struct {
	rec   *nodeRecorders
	delta *histo.Delta // made when the node's recorders are
	out   []Interval
}

// publishNodes gives observers (the series) the run's node recorders as
// they are now: a cluster's members, or the nodes of a primary and its
// replicas. Pacer-side.
func (run *openRun) publishNodes() {
	var view []nodeView
	switch {
	case run.cl != nil:
		for k, m := range run.cl.members {
			view = append(view, nodeView{addr: m.Addr, role: m.Role, rec: run.cl.nodeRec[k]})
		}
	default:
		for _, n := range run.solo {
			view = append(view, nodeView{addr: n.addr, role: n.role, rec: n.rec})
		}
	}
	run.nodeRecs.Store(&view)
}

// nodeRecorders returns the node recorders for observers.
func (run *openRun) nodeRecorders() []*nodeRecorders {
	v := run.nodeRecs.Load()
	if v == nil {
		return nil
	}
	out := make([]*nodeRecorders, len(*v))
	for i, n := range *v {
		out[i] = n.rec
	}
	return out
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
			if h := ns.rec.p.Load(); h != nil {
				ns.delta = histo.NewDeltaZero(h.resp)
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

// nodeIntervals returns each node's intervals, by node index.
func (s *Series) nodeIntervals() [][]Interval {
	out := make([][]Interval, len(s.perNode))
	for k, ns := range s.perNode {
		out[k] = ns.out
	}
	return out
}
