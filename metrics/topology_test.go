package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// TestTopologyMetrics: a test's nodes (with their roles), its events by
// kind and the longest window, and the replicas' visibility lag are
// exposed; a second run of the test adds to them; they lint clean.
func TestTopologyMetrics(t *testing.T) {
	c := NewCollector(nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	run := func() *fake {
		f := newFake(true)
		primary, replica, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
		primary.Record(200_000)
		replica.Record(300_000)
		replica.Record(400_000)
		lag.Record(1_500_000)
		f.topo = topologySource{
			nodes: func() []scheduler.LiveNode {
				return []scheduler.LiveNode{{Addr: "127.0.0.1:7001", Role: "primary", Response: primary}, {Addr: "127.0.0.1:7002", Role: "replica", Response: replica},
					{Addr: "127.0.0.1:7003", Role: "replica"}} // answered nothing yet
			},
			events: func() []events.Event {
				return []events.Event{{Kind: events.Failover, Write: &events.Window{Start: 0, End: 250_000_000}}, {Kind: events.Connection}}
			},
			visibility: func() map[string]*histo.Recorder { return map[string]*histo.Recorder{"127.0.0.1:7002": lag} },
		}
		return f
	}
	c.watch("GET", ModeOpen, run())()
	end := c.watch("GET", ModeOpen, run())
	defer end()
	fams := scrape(t, reg, acceptText)
	lv := func(extra map[string]string) map[string]string {
		m := map[string]string{"test": "GET", "mode": "open"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	if m := find(t, fams, "pacer_node_response_seconds", lv(map[string]string{"node": "127.0.0.1:7002", "role": "replica"})); m == nil || m.GetHistogram().GetSampleCount() != 4 {
		t.Errorf("replica node: %v, want 4 samples over two runs", m)
	}
	if m := find(t, fams, "pacer_node_response_seconds", lv(map[string]string{"node": "127.0.0.1:7003"})); m != nil {
		t.Errorf("a node that answered nothing has a histogram: %v", m)
	}
	if m := find(t, fams, "pacer_topology_events_total", lv(map[string]string{"kind": "failover"})); m == nil || m.GetCounter().GetValue() != 2 {
		t.Errorf("failover events: %v, want 2", m)
	}
	if m := find(t, fams, "pacer_unavailable_seconds", lv(map[string]string{"class": "write"})); m == nil || m.GetGauge().GetValue() != 0.25 {
		t.Errorf("writes unavailable: %v, want 0.25", m)
	}
	if m := find(t, fams, "pacer_visibility_seconds", lv(map[string]string{"replica": "127.0.0.1:7002"})); m == nil || m.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("visibility: %v, want 2 samples", m)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
