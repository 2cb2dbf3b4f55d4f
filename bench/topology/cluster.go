package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/report"
)

// clusterScenario: three primaries with a replica each; one run --cluster
// --rate 10k of SETs and GETs, during which a replica takes over its
// primary (CLUSTER FAILOVER at 8 s) and redis-cli --cluster reshard moves
// 1000 slots from another primary to a third (4 s later).
func clusterScenario(c config) {
	const slots = 1000
	e := newEnv()
	defer e.stop()
	cl := redistest.StartClusterWithReplicas(e, 3, 1)
	dir := c.dir(e, "cluster")
	rate, foAt := c.rateOr("10k"), c.scaled(8*time.Second)
	rsAt := foAt + 4*time.Second // the failover takes 1–3 s, until every node agrees
	all := append(slices.Clone(cl.Nodes), cl.Replicas...)
	old, promoted := cl.Nodes[1], cl.ReplicaOf(1)[0]
	source, dest := cl.Nodes[2], cl.Nodes[0]
	js := filepath.Join(dir, "cluster.json")
	args := []string{"run", "--cluster", "-p", cl.Nodes[0].PortString(), "--rate", rate, "--duration", c.duration.String(),
		"--mix", "set:1,get:1", "-r", "100000"}
	fmt.Printf("primaries %v, replicas %v\n", cl.Addrs(), addrs(cl.Replicas))
	fmt.Printf("pacer %s --json FILE; CLUSTER FAILOVER on %s (replica of %s) at %v; redis-cli --cluster reshard of %d slots %s -> %s at %v\n",
		join(args), promoted.Addr, old.Addr, foAt.Round(time.Millisecond), slots, source.Addr, dest.Addr, rsAt.Round(time.Millisecond))
	srcSlots, err := ownedSlots(source)
	e.check(err)
	oldSlots, err := ownedSlots(old)
	e.check(err)

	resetStats(e, all...)
	rw := watchRedirects(all)
	p := e.startPacer(c.bin, c.duration+2*time.Minute, append(args, "--json", js)...)
	sleepUntil(p.started, foAt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f0 := time.Now()
	e.check(cl.Failover(ctx, promoted))
	f1 := time.Now()
	sleepUntil(p.started, rsAt)
	r0 := time.Now()
	e.check(cl.Reshard(ctx, 2, 0, slots))
	r1 := time.Now()
	o := p.wait()
	samples := rw.stop()
	fmt.Printf("run (load %s): exit %d\n", loadAverage(), o.code)
	c.show(o, "  per node", "  events")
	if o.code != 0 && o.code != 4 {
		judge(fmt.Sprintf("the cluster run: exit %d: %s", o.code, tail(o.stderr)), false)
		return
	}
	d, err := readDoc(js)
	e.check(err)
	t := &d.Tests[0]
	fmt.Printf("  %s\n", t.hostLine())
	t0, err := t.start()
	e.check(err)
	rel := func(x time.Time) float64 { return x.Sub(t0).Seconds() }
	fmt.Printf("  CLUSTER FAILOVER %.3f–%.3f s (until every node agreed); reshard %.3f–%.3f s; the timeline ends at %.3f s\n",
		rel(f0), rel(f1), rel(r0), rel(r1), t.DurationS)
	if rel(r1) > t.DurationS {
		fmt.Println("  (the reshard outlasted the run: slots it moved after the end went unseen)")
	}
	for i, ev := range t.Events {
		fmt.Printf("    %s\n", eventLine(i, ev))
	}

	// An event for each.
	var fo *report.Event
	var moved []*report.Event
	movedSlots := 0
	for i := range t.Events {
		ev := &t.Events[i]
		switch {
		case ev.Kind == "failover" && slices.Contains(ev.Nodes, old.Addr) && slices.Contains(ev.Nodes, promoted.Addr) && fo == nil:
			fo = ev
		case ev.Kind == "slots_moved" && slices.Contains(ev.Nodes, source.Addr) && ev.AtS >= rel(r0)-0.5:
			moved = append(moved, ev)
			movedSlots += slotCount(ev.Slots)
		}
	}
	foAtS := math.NaN()
	if fo != nil {
		foAtS = fo.AtS
	}
	judge(fmt.Sprintf("events: a failover on %s and %s (at %.3f s): %v; slots_moved from %s after the reshard began: %d, naming %d slots of the %d moved",
		old.Addr, promoted.Addr, foAtS, fo != nil, source.Addr, len(moved), movedSlots, slots), fo != nil && len(moved) > 0)

	// Counts, exactly, and the nodes add up to the test.
	want := uint64(math.Round(rateOf(rate) * c.duration.Seconds()))
	var sum counts
	for _, n := range t.Nodes {
		sum.Sent += n.Sent
		sum.Completed += n.Completed
		sum.Errors += n.Errors
		sum.Timeouts += n.Timeouts
	}
	judge(fmt.Sprintf("counts: %s (%d due); the nodes' rows add up to sent %d, completed %d, errors %d, timeouts %d",
		t.Counts, want, sum.Sent, sum.Completed, sum.Errors, sum.Timeouts),
		t.Counts.exact() && t.Counts.Scheduled == want && sum.Sent == t.Counts.Sent && sum.Completed == t.Counts.Completed &&
			sum.Errors == t.Counts.Errors && sum.Timeouts == t.Counts.Timeouts)

	// The affected nodes' intervals show the spike.
	var quiet [][2]float64
	for _, ev := range t.Events {
		quiet = append(quiet, spansOf(&ev)...)
	}
	if fo != nil {
		spike(t, "failover", []string{old.Addr, promoted.Addr}, spansOf(fo), quiet)
	}
	if len(moved) > 0 {
		var sp [][2]float64
		for _, ev := range moved {
			sp = append(sp, spansOf(ev)...)
		}
		spike(t, "reshard", []string{source.Addr, dest.Addr}, sp, quiet)
	}

	// MOVED replies: pacer's count per node, and the servers' own
	// (errorstats, sampled every 50 ms).
	fmt.Println("  MOVED and ASK per node, pacer's (nodes[].moved, .ask) and the server's own (INFO errorstats):")
	for _, n := range all {
		row := t.node(n.Addr)
		last := lastSample(samples[n.Addr])
		pm, pa := "-", "-"
		if row != nil {
			pm, pa = strconv.FormatUint(row.Moved, 10), strconv.FormatUint(row.Ask, 10)
		}
		fmt.Printf("    %-16s MOVED pacer %6s server %6d   ASK pacer %6s server %6d\n", n.Addr, pm, last.moved, pa, last.ask)
	}
	// The former primary lost all its slots at once: after pacer's
	// refresh (half a second after its first MOVED) it takes no request.
	ss := samples[old.Addr]
	total, first := movedBetween(ss, time.Time{}, time.Now())
	later := int64(-1)
	if !first.IsZero() {
		later, _ = movedBetween(ss, first.Add(500*time.Millisecond), time.Now())
	}
	judge(fmt.Sprintf("the former primary %s (lost its %d slots in the failover, %.3f–%.3f s): %d MOVED, the first at %.2f s; %d later than 0.5 s after it (after the refresh)",
		old.Addr, len(oldSlots), rel(f0), rel(f1), total, rel(first), later), later == 0)
	// The reshard's source lost its slots one by one: at most one MOVED a
	// slot, and none once the reshard is over and the map refreshed.
	ss = samples[source.Addr]
	during, _ := movedBetween(ss, r0, r1.Add(500*time.Millisecond))
	afterEnd, _ := movedBetween(ss, r1.Add(500*time.Millisecond), time.Now())
	srcMoved := lastSample(ss).moved
	srcRow := t.node(source.Addr)
	pm := uint64(0)
	if srcRow != nil {
		pm = srcRow.Moved
	}
	judge(fmt.Sprintf("the reshard's source %s (had %d slots, lost %d): %d MOVED (pacer counted %d), %d during the reshard, %d later than 0.5 s after its end; at most one a slot: %d ≤ %d",
		source.Addr, len(srcSlots), slots, srcMoved, pm, during, afterEnd, srcMoved, slots), srcMoved <= slots && afterEnd == 0)
}

// spansOf is an event's spans: from when it was first seen to when last,
// and its windows.
func spansOf(ev *report.Event) [][2]float64 {
	sp := [][2]float64{{ev.AtS, ev.LastS}}
	for _, w := range []*report.EventWindow{ev.Write, ev.Read} {
		if w != nil {
			sp = append(sp, [2]float64{w.StartS, w.EndS})
		}
	}
	return sp
}

// spike prints, for each of the nodes, the worst interval response time
// among the intervals that meet the event's spans against the median of
// its intervals that meet no event's (quiet), and judges that one of
// them is at least twice its quiet median.
func spike(t *test, what string, addrs []string, event, quiet [][2]float64) {
	var parts []string
	ok := false
	for _, a := range addrs {
		n := t.node(a)
		if n == nil || len(n.Intervals) == 0 {
			parts = append(parts, a+" has no intervals")
			continue
		}
		var peakMax, peakP99, at float64
		var qMax, qP99 []float64
		for _, iv := range n.Intervals {
			if iv.ResponseMs == nil {
				continue
			}
			switch {
			case overlaps(iv, event):
				if iv.ResponseMs.Max > peakMax {
					peakMax, peakP99, at = iv.ResponseMs.Max, iv.ResponseMs.P99, iv.StartS
				}
			case !overlaps(iv, quiet):
				qMax = append(qMax, iv.ResponseMs.Max)
				qP99 = append(qP99, iv.ResponseMs.P99)
			}
		}
		qm, qp := median(qMax), median(qP99)
		ratio := 0.0
		if qm > 0 {
			ratio = peakMax / qm
		}
		ok = ok || ratio >= 2
		parts = append(parts, fmt.Sprintf("%s interval %.0f s max %.3f ms (p99 %.3f ms) vs quiet median max %.3f ms (p99 %.3f ms): %.1f×",
			a, at, peakMax, peakP99, qm, qp, ratio))
	}
	judge(fmt.Sprintf("%s spike in the per-interval latency (at least 2× the node's quiet intervals' max): %s", what, strings.Join(parts, "; ")), ok)
}

// ownedSlots is the slots s serves, per its CLUSTER SLOTS.
func ownedSlots(s *redistest.Server) ([]int, error) {
	v, err := s.Query("CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	var out []int
	arr, _ := v.([]any)
	for _, r := range arr {
		x, _ := r.([]any)
		if len(x) < 3 {
			continue
		}
		if n, _ := x[2].([]any); len(n) < 2 || n[1] != int64(s.Port) {
			continue
		}
		lo, _ := x[0].(int64)
		hi, _ := x[1].(int64)
		for i := lo; i <= hi; i++ {
			out = append(out, int(i))
		}
	}
	return out, nil
}

func addrs(ss []*redistest.Server) []string {
	var a []string
	for _, s := range ss {
		a = append(a, s.Addr)
	}
	return a
}
