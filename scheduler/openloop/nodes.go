package openloop

import (
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/scheduler"
)

// Per-node results of an open run that is not a cluster's: a primary with
// replicas that reads go to, or a primary that moves (Sentinel). Each
// address the run sends to is a node with its role, its recorders and its
// lanes' counts; the nodes' counts add up to the test's.

// soloNode is a node of such a run. Pacer-owned.
type soloNode struct {
	addr, role string
	rec        *scheduler.NodeRecorders
}

// perNode reports whether the run keeps per-node results for a target
// that is not a cluster.
func (run *openRun) perNode() bool {
	return run.cfg.Cluster == nil && (run.cfg.Follow != nil || len(run.cfg.Replicas) > 0)
}

// soloNodeOf returns the index of the node at addr, adding it with role;
// a node that serves as a primary is one from then on.
func (run *openRun) soloNodeOf(addr, role string) int {
	for i := range run.solo {
		if run.solo[i].addr == addr {
			if role == scheduler.RolePrimary {
				run.solo[i].role = scheduler.RolePrimary
			}
			return i
		}
	}
	run.solo = append(run.solo, soloNode{addr: addr, role: role, rec: &scheduler.NodeRecorders{}})
	run.publishNodes()
	return len(run.solo) - 1
}

// label makes lane s, which has no live connection (its next one's
// reader starts after), one of the node at addr in role.
func (run *openRun) label(s *lane, addr, role string) {
	s.addr = addr
	if !run.perNode() {
		return
	}
	s.node = run.soloNodeOf(addr, role)
	s.h.nodeRec = run.solo[s.node].rec
}

// soloResults sums the lanes' counts per node; what the pacer itself
// left unsent (never queued, or dropped for being late) is the primary's
// of the moment, so that the nodes add up to the test's counts c.
func (run *openRun) soloResults(c scheduler.Counts) []scheduler.NodeResult {
	out := make([]scheduler.NodeResult, len(run.solo))
	for k, n := range run.solo {
		out[k].Node = scheduler.Node{Addr: n.addr, Role: n.role}
		out[k].Response, out[k].Service, out[k].Receive = n.rec.Snapshot()
	}
	var laneUnsent uint64
	for _, s := range run.lanes {
		r := &out[s.node]
		if !s.leaving {
			r.Connections++
		}
		h := s.h
		r.Counts.Sent += s.sent.Load()
		r.Counts.Completed += h.completed.Load()
		r.Counts.Errors += h.errors.Load() + s.left.errors
		r.Counts.Timeouts += s.left.timeouts
		r.Counts.Unsent += s.left.unsent
		laneUnsent += s.left.unsent
	}
	addr := run.cfg.Addr
	if f := run.cfg.Follow; f != nil {
		addr, _ = f.Primary()
	}
	if k := run.soloIndex(addr); k >= 0 {
		out[k].Counts.Unsent += c.Unsent - min(c.Unsent, laneUnsent)
	} else if len(out) > 0 {
		out[0].Counts.Unsent += c.Unsent - min(c.Unsent, laneUnsent)
	}
	for k := range out {
		cnt := &out[k].Counts
		cnt.Scheduled = cnt.Sent + cnt.Unsent
	}
	return out
}

// soloIndex returns the index of the node at addr, -1 if none.
func (run *openRun) soloIndex(addr string) int {
	for i := range run.solo {
		if run.solo[i].addr == addr {
			return i
		}
	}
	return -1
}

// replicaLane makes lane s, the run's i-th starting connection, one of a
// replica's when i is past the primary's connections: the connections
// after them are PerReplica to each of Replicas, in order.
func (run *openRun) replicaLane(s *lane, i int) {
	cfg := run.cfg
	if len(cfg.Replicas) == 0 || cfg.PerReplica <= 0 {
		return
	}
	first := run.startConns - cfg.PerReplica*len(cfg.Replicas)
	if i < first {
		return
	}
	s.replica = true
	run.label(s, cfg.Replicas[(i-first)/cfg.PerReplica], scheduler.RoleReplica)
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
func (run *openRun) nodeRecorders() []*scheduler.NodeRecorders {
	v := run.nodeRecs.Load()
	if v == nil {
		return nil
	}
	out := make([]*scheduler.NodeRecorders, len(*v))
	for i, n := range *v {
		out[i] = n.rec
	}
	return out
}

// nodeView is a node as observers see it.
type nodeView struct {
	addr, role string
	rec        *scheduler.NodeRecorders
}

// liveNodes is the nodes for the Live view.
func (run *openRun) liveNodes() []scheduler.LiveNode {
	v := run.nodeRecs.Load()
	if v == nil {
		return nil
	}
	out := make([]scheduler.LiveNode, len(*v))
	for i, n := range *v {
		out[i] = scheduler.LiveNode{Addr: n.addr, Role: n.role}
		if h := n.rec.Made(); h != nil {
			out[i].Response = h.Response
		}
	}
	return out
}

// liveEvents is the events so far with their windows as they stand,
// judged against the run's bound (its SLO's, or ten times the median
// response so far).
func (run *openRun) liveEvents() []events.Event {
	if run.events == nil {
		return nil
	}
	evs, _ := run.events.Events()
	bound := run.cfg.EventBound
	if bound <= 0 {
		bound = events.DefaultBound(time.Duration(run.response.Snapshot().ValueAtQuantile(50)))
	}
	events.Windows(evs, run.outcomes.Load(), events.WindowOptions{Bound: bound, Gap: eventGap(run.cfg.Rate)})
	return evs
}
