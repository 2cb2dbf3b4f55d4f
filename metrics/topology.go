package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// What a test shows of its topology: its nodes' response times (a
// cluster's, or a primary's and its replicas', labelled node and role),
// the topology events so far by kind and the longest window any of them
// kept writes or reads unavailable, and each replica's visibility lag
// (--visibility). Families of their own, as pacer_command_* are: sum()
// over them never counts a request twice with the test's.

var (
	descNodeHist    = desc("pacer_node_response_seconds", "Response time of one node's requests (a cluster's node, or a primary and its replicas); its count is the node's completed requests.", "node", "role")
	descEvents      = desc("pacer_topology_events_total", "Topology events seen so far: a failover, slots that moved, connections lost and back, replies that said a node could not serve.", "kind")
	descUnavailable = desc("pacer_unavailable_seconds", "The longest window of any topology event so far: from the first request of the class that failed or exceeded the bound to the first served after it.", "class")
	descVisibility  = desc("pacer_visibility_seconds", "Replication visibility lag: a probe's first sighting on the replica less its intended write (--visibility).", "replica")
)

// topologySource is what a running test shows of its topology.
type topologySource struct {
	nodes      func() []scheduler.LiveNode
	events     func() []events.Event
	visibility func() map[string]*histo.Recorder
}

func (l liveSource) topology() topologySource {
	return topologySource{nodes: l.Nodes, events: l.Events, visibility: l.Visibility}
}

// nodeSnap is a node's histogram; visSnap a replica's.
type nodeSnap struct {
	node, role string
	h          hist
}

// topologySnap is a test's topology numbers at one moment.
type topologySnap struct {
	nodes       []nodeSnap
	events      map[string]uint64
	unavailable [2]float64 // writes, reads: seconds
	visibility  []nodeSnap // node: the replica
}

func readTopology(s topologySource, bounds []int64) topologySnap {
	var out topologySnap
	if s.nodes != nil {
		for _, n := range s.nodes() {
			if n.Response != nil {
				out.nodes = append(out.nodes, nodeSnap{node: labelValue(n.Addr), role: n.Role, h: readHist(n.Response, bounds)})
			}
		}
	}
	if s.events != nil {
		for _, e := range s.events() {
			if out.events == nil {
				out.events = map[string]uint64{}
			}
			out.events[e.Kind]++
			for c, w := range []*events.Window{e.Write, e.Read} {
				if w != nil {
					out.unavailable[c] = max(out.unavailable[c], w.Unavailable().Seconds())
				}
			}
		}
	}
	if s.visibility != nil {
		for addr, r := range s.visibility() {
			out.visibility = append(out.visibility, nodeSnap{node: labelValue(addr), h: readHist(r, bounds)})
		}
	}
	return out
}

// add adds a later run's topology numbers (nodes and replicas by
// address, events by kind, the longest window kept).
func (t *topologySnap) add(o topologySnap) {
	t.nodes = addNodeSnaps(t.nodes, o.nodes)
	t.visibility = addNodeSnaps(t.visibility, o.visibility)
	for k, n := range o.events {
		if t.events == nil {
			t.events = map[string]uint64{}
		}
		t.events[k] += n
	}
	for c := range t.unavailable {
		t.unavailable[c] = max(t.unavailable[c], o.unavailable[c])
	}
}

func addNodeSnaps(into, from []nodeSnap) []nodeSnap {
next:
	for _, f := range from {
		for i := range into {
			if into[i].node == f.node {
				into[i].h.add(f.h)
				if f.role != "" {
					into[i].role = f.role
				}
				continue next
			}
		}
		n := nodeSnap{node: f.node, role: f.role}
		n.h.add(f.h)
		into = append(into, n)
	}
	return into
}

// collectTopology sends a test's topology series; lv are its labels.
func collectTopology(ch chan<- prometheus.Metric, t topologySnap, le []float64, lv []string) {
	with := func(extra ...string) []string { return append(append([]string{}, lv...), extra...) }
	for _, n := range t.nodes {
		if n.h.ok {
			ch <- constHistogram(descNodeHist, n.h, le, with(n.node, n.role))
		}
	}
	for kind, n := range t.events {
		ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(n), with(kind)...)
	}
	if len(t.events) > 0 {
		for c, class := range []string{"write", "read"} {
			ch <- prometheus.MustNewConstMetric(descUnavailable, prometheus.GaugeValue, t.unavailable[c], with(class)...)
		}
	}
	for _, v := range t.visibility {
		if v.h.ok {
			ch <- constHistogram(descVisibility, v.h, le, with(v.node))
		}
	}
}
