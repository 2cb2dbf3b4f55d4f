package openloop

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// TestClusterStepsRouteEveryStep: two steps over the pools of three
// primaries. Each step routes by slot and holds its own per-node results,
// which add up to the step's; a connection lost between the steps is
// dialed again to its own node, through Cluster.Dial.
func TestClusterStepsRouteEveryStep(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "starts a Redis Cluster (TestClusterStepsJoinANewNodeEachStep routes steps through a fake one)")
	c := redistest.StartCluster(t, 3)
	tpl := compileKeyed(t, 10000, "SET", "key:__rand_int__", "v")
	conns, oc := clusterConns(t, c, 2)
	var dials dialLog
	oc.Dial = dials.wrap(oc.Dial)
	rates := []float64{2000, 3000}
	settle, d := 100*time.Millisecond, 300*time.Millisecond
	var prevs []*Step
	plan := plans(rates, settle, d, &prevs)
	next := func(i int, prev *Step) (StepPlan, bool) {
		if i == 1 {
			conns[0].Close() // kept from step 0: step 1 finds it dead
		}
		return plan(i, prev)
	}
	steps := runSteps(t, conns, scenarios.NewStream(tpl, 1), Config{Cluster: oc, Interval: 100 * time.Millisecond}, next, len(rates))
	for i, st := range steps {
		cnt := st.Counts
		tl := timeline.Uniform{Rate: timeline.RatePerSecond(rates[i])}
		want := timeline.Count(tl, int64(settle+d), 1<<62) - timeline.Count(tl, int64(settle), 1<<62)
		if cnt.Scheduled != want || cnt.Completed != want || cnt.Errors+cnt.Timeouts+cnt.Unsent != 0 || !cnt.Balanced() {
			t.Errorf("step %d: counts %+v (%v), want %d completed", i, cnt, st.ErrorCodes, want)
		}
		if len(st.Nodes) != 3 {
			t.Fatalf("step %d: %d nodes", i, len(st.Nodes))
		}
		var sent, completed uint64
		var samples, received int64
		for _, n := range st.Nodes {
			if n.Counts.Completed == 0 || n.Counts.Errors != 0 || n.Connections != 2 || !n.Counts.Balanced() {
				t.Errorf("step %d: node %s: %+v", i, n.Addr, n.Counts)
			}
			sent += n.Counts.Sent
			completed += n.Counts.Completed
			samples += n.Response.TotalCount()
			received += n.Receive.TotalCount()
		}
		if sent != cnt.Sent || completed != cnt.Completed || samples != st.Response.TotalCount() {
			t.Errorf("step %d: nodes sent %d, completed %d, %d samples; the step %d, %d, %d",
				i, sent, completed, samples, cnt.Sent, cnt.Completed, st.Response.TotalCount())
		}
		// Receive lags are recorded per read, flushed before a step's
		// replies count: each step holds its own, per node too.
		if received != samples || st.Receive.TotalCount() != samples {
			t.Errorf("step %d: receive lags %d on the nodes, %d in the step, for %d responses", i, received, st.Receive.TotalCount(), samples)
		}
	}
	if steps[0].Reconnects != 0 || steps[1].Reconnects != 1 || steps[1].ConnsLost != 1 {
		t.Errorf("reconnects %d then %d, lost %d", steps[0].Reconnects, steps[1].Reconnects, steps[1].ConnsLost)
	}
	if dialed := dials.addrs(); len(dialed) != 1 || dialed[0] != oc.Nodes[0].Addr {
		t.Errorf("redialed %v, want node 0 (%s) once", dialed, oc.Nodes[0].Addr)
	}
}

// TestClusterStepsJoinANewNodeEachStep: the first map's one primary
// answers -MOVED to a primary it did not hold. The node joins in the
// first step; its connections end with the step, and the next step
// joins it again on its first redirect, so every request of both steps
// completes there and each step reports it as joined.
func TestClusterStepsJoinANewNodeEachStep(t *testing.T) {
	t.Parallel()
	tpl := compileKeyed(t, 1000, "GET", "key:__rand_int__")
	b := drivertest.NewServer(t, tpl.Len(), func(int) ([]byte, bool) { return []byte("$-1\r\n"), false })
	bAddr := b.Addr()
	a, top := redirectingPrimary(t, tpl.Len(), bAddr)
	aAddr := a.Addr()
	// The refreshed map gives every slot to the new primary, so the first
	// step ends with a map whose owners the next step's nodes lack.
	scaled := cluster.NewTopology([]cluster.Node{{Addr: aAddr}, {Addr: bAddr}})
	scaled.Assign(0, cluster.Slots-1, 1)
	var dials dialLog
	oc := &Cluster{Nodes: []scheduler.Node{{Addr: aAddr, Slots: cluster.Slots}}, PerNode: 2, Topology: top,
		Keys:    oneKey,
		Refresh: func(context.Context) (*cluster.Topology, error) { return scaled, nil },
		Dial:    dials.wrap(dialNode)}
	rates := []float64{2000, 3000}
	settle, d := 100*time.Millisecond, 300*time.Millisecond
	var prevs []*Step
	steps := runSteps(t, a.Dial(t, 2, 0), scenarios.NewStream(tpl, 1), Config{Cluster: oc}, plans(rates, settle, d, &prevs), len(rates))
	for i, st := range steps {
		cnt := st.Counts
		if cnt.Completed == 0 || cnt.Completed != cnt.Scheduled || cnt.Errors+cnt.Timeouts+cnt.Unsent != 0 {
			t.Errorf("step %d: counts %+v (%v, %q)", i, cnt, st.ErrorCodes, st.FirstError)
		}
		if len(st.Nodes) != 2 {
			t.Fatalf("step %d: nodes %+v", i, st.Nodes)
		}
		if nb := st.Nodes[1]; nb.Addr != bAddr || !nb.Joined || nb.Counts.Completed != cnt.Completed {
			t.Errorf("step %d: joined node %+v", i, nb)
		}
	}
	if dialed := dials.addrs(); len(dialed) != 4 {
		t.Errorf("dialed %v, want the new node's 2 connections in each step", dialed)
	}
}

// dialLog notes the addresses a run's Cluster.Dial dials, from any
// goroutine.
type dialLog struct {
	mu     sync.Mutex
	dialed []string
}

// wrap returns dial noting each address it is given.
func (l *dialLog) wrap(dial func(context.Context, string) (*conn.Conn, error)) func(context.Context, string) (*conn.Conn, error) {
	return func(ctx context.Context, addr string) (*conn.Conn, error) {
		l.mu.Lock()
		l.dialed = append(l.dialed, addr)
		l.mu.Unlock()
		return dial(ctx, addr)
	}
}

// addrs returns the addresses dialed so far.
func (l *dialLog) addrs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.dialed)
}
