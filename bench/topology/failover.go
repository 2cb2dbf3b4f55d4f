package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"

	"github.com/pacer-load/pacer/internal/redistest"
)

// failover: a primary with two replicas and three sentinels; pacer run
// --sentinel --rate 5k -t set,get --duration 30s, with SENTINEL FAILOVER
// at 10 s, between two runs without one (before, on the first primary;
// after, on the new one).
func failover(c config) {
	e := newEnv()
	defer e.stop()
	set := redistest.StartReplicated(e, 2)
	s := redistest.StartSentinels(e, set, 3, redistest.SentinelOptions{})
	waitStreaming(e, set.Primary, set.Replicas...)
	dir := c.dir(e, "failover")
	rate, at := c.rateOr("5k"), c.scaled(10*time.Second)
	args := func(name string) []string {
		return []string{"run", "--sentinel", s.Addrs(), "--master", s.Master, "--rate", rate, "-t", "set,get",
			"--duration", c.duration.String(), "--json", filepath.Join(dir, name)}
	}
	limit := 2*c.duration + 2*time.Minute
	fmt.Printf("primary %s, replicas %s %s, sentinels %s\n", set.Primary.Addr, set.Replicas[0].Addr, set.Replicas[1].Addr, s.Addrs())
	fmt.Printf("pacer %s --json FILE; SENTINEL FAILOVER %s at %v of the failover run, through %s (the sentinel pacer asks first and keeps its main subscription on: it leads the failover, and announces it last)\n",
		join(args("")[:11]), s.Master, at.Round(time.Millisecond), s.Nodes[0].Addr)

	baseline := func(name string) *doc {
		o := e.startPacer(c.bin, limit, args(name)...).wait()
		if o.code != 0 && o.code != 4 {
			judge(fmt.Sprintf("the run without failover: exit %d: %s", o.code, tail(o.stderr)), false)
			return nil
		}
		d, err := readDoc(filepath.Join(dir, name))
		e.check(err)
		fmt.Printf("run without failover (%s, load %s): exit %d\n", name, loadAverage(), o.code)
		for _, t := range d.Tests {
			fmt.Printf("    %-4s %s; %d events; %s\n", t.ID, t.Counts, len(t.Events), t.hostLine())
		}
		return d
	}
	before := baseline("before.json")
	if before == nil {
		return
	}

	old := set.Primary
	resetStats(e, set.Nodes()...)
	w := redistest.WatchWrites(old)
	p := e.startPacer(c.bin, limit, args("failover.json")...)
	sleepUntil(p.started, at)
	issued := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	sw, err := s.Failover(ctx, 0)
	cancel()
	e.check(err)
	atSwitch := calls(old, "set") // read a few ms after the announcement
	o := p.wait()
	last, lastCalls := w.Stop()
	fmt.Printf("failover run (load %s): exit %d; +switch-master %s -> %s\n", loadAverage(), o.code, sw.From, sw.To)
	if d, err := readDoc(filepath.Join(dir, "failover.json")); err == nil {
		for _, t := range d.Tests {
			fmt.Printf("    %-4s %s\n", t.ID, t.hostLine())
		}
	}
	c.show(o, "  per node", "  events")
	if o.code != 0 && o.code != 4 {
		judge(fmt.Sprintf("the failover run: exit %d: %s", o.code, tail(o.stderr)), false)
		return
	}
	d, err := readDoc(filepath.Join(dir, "failover.json"))
	e.check(err)
	newPrimary := set.Server(sw.To)
	now, err := s.PrimaryAddr(1)
	e.check(err)
	getsNew, getsOld := calls(newPrimary, "get"), calls(old, "get")
	setsNew := calls(newPrimary, "set")

	var others []*redistest.Server
	for _, n := range set.Nodes() {
		if n != newPrimary {
			others = append(others, n)
		}
	}
	waitStreaming(e, newPrimary, others...)
	after := baseline("after.json")
	if after == nil {
		return
	}

	setT, getT := &d.Tests[0], &d.Tests[len(d.Tests)-1]
	t0, err := setT.start()
	e.check(err)
	rel := func(t time.Time) float64 { return t.Sub(t0).Seconds() }

	// The run ends on the new primary.
	// The last whole interval (the last one may be the few ms the timeline
	// ends with).
	lastStart := 0.0
	for _, iv := range setT.Intervals {
		if iv.DurationS >= 0.5 {
			lastStart = iv.StartS
		}
	}
	lastIv := func(n *node) uint64 {
		if n != nil {
			for _, iv := range n.Intervals {
				if iv.StartS == lastStart {
					return iv.Completed
				}
			}
		}
		return 0
	}
	newRow, oldRow := setT.node(sw.To), setT.node(old.Addr)
	getRow := getT.node(sw.To)
	getOnNew := uint64(0)
	if getRow != nil {
		getOnNew = getRow.Completed
	}
	ends := now == sw.To && getT.ID == "get" && getOnNew == getT.Counts.Completed && getT.Counts.Completed > 0 &&
		getsOld == 0 && getsNew >= int64(getT.Counts.Completed) && lastIv(newRow) > 0 && lastIv(oldRow) == 0
	judge(fmt.Sprintf("run ends on the new primary %s (the sentinels name it): GET test %d of %d completed there (its commandstats %d GETs, the former primary's %d); the SET test's last interval (%.0f s) %d completed on it, %d on the former primary",
		sw.To, getOnNew, getT.Counts.Completed, getsNew, getsOld, lastStart, lastIv(newRow), lastIv(oldRow)), ends)

	// Counts, exactly.
	for _, t := range d.Tests {
		want := uint64(math.Round(rateOf(rate) * c.duration.Seconds()))
		judge(fmt.Sprintf("%s test: %s (%d due at %s/s over %v)", t.ID, t.Counts, want, rate, c.duration),
			t.Counts.exact() && t.Counts.Scheduled == want)
	}

	// One failover event, its write window against the switch and the
	// former primary's last write.
	var fo []int
	for i, ev := range setT.Events {
		if ev.Kind == "failover" {
			fo = append(fo, i)
		}
	}
	for _, t := range d.Tests {
		for i, ev := range t.Events {
			fmt.Printf("    %s %s\n", t.ID, eventLine(i, ev))
		}
	}
	fmt.Printf("  SENTINEL FAILOVER issued at %.3f s; +switch-master at %.3f s; the former primary's last write (%d SETs) at %.3f s; the new primary ran %d SETs\n",
		rel(issued), rel(sw.At), lastCalls, rel(last), setsNew)
	judge(fmt.Sprintf("failover events: %d (in the SET test; %d in the GET test)", len(fo), countKind(getT, "failover")), len(fo) == 1 && countKind(getT, "failover") == 0)
	if len(fo) == 0 {
		return
	}
	ev := setT.Events[fo[0]]
	lo, hi := min(rel(sw.At), rel(last)), max(rel(sw.At), rel(last))
	if ev.Write == nil {
		judge("failover event has no write window", false)
	} else {
		wn := ev.Write
		judge(fmt.Sprintf("write window %.3f–%.3f s (%.3f s unavailable, spike %.1f ms), switch %.3f s, last old write %.3f s: within 0.5 s of %.3f–%.3f s",
			wn.StartS, wn.EndS, wn.UnavailableS, wn.SpikeMs, rel(sw.At), rel(last), lo, hi),
			wn.StartS >= lo-0.5 && wn.EndS <= hi+0.5)
	}
	judge(fmt.Sprintf("the former primary took writes until %.3f s after the switch, %d SETs after it (they are lost when it is made a replica): within 0.5 s",
		rel(last)-rel(sw.At), int64(lastCalls)-atSwitch), rel(last)-rel(sw.At) <= 0.5)
	hasBoth := slices.Contains(ev.Nodes, sw.From) && slices.Contains(ev.Nodes, sw.To) && slices.Contains(ev.Seen, "+switch-master")
	judge(fmt.Sprintf("the event names both primaries and +switch-master: nodes %v, seen %v", ev.Nodes, ev.Seen), hasBoth)

	// p99 outside the windows against the runs without failover.
	outside := func(t *test) func(interval) bool {
		spans := t.windows()
		return func(iv interval) bool { return !overlaps(iv, spans) }
	}
	var ratios []string
	for k := range d.Tests {
		t := &d.Tests[k]
		h, n, err := pool(t.Intervals, outside(t))
		e.check(err)
		var base []float64
		for _, b := range []*doc{before, after} {
			if k < len(b.Tests) {
				bt := &b.Tests[k]
				bh, _, err := pool(bt.Intervals, outside(bt))
				e.check(err)
				base = append(base, ms(bh, 99))
			}
		}
		ratios = append(ratios, fmt.Sprintf("%s %.3f ms over %d of %d intervals vs %.3f / %.3f ms without failover (before / after)",
			t.ID, ms(h, 99), n, len(t.Intervals), base[0], base[1]))
	}
	fmt.Println("  p99 outside the windows, per test: " + ratios[0] + "; " + ratios[1])
	// The verdict pools the run's tests, and both runs without failover.
	fh := pooled(e, d, outside)
	bh := pooled(e, before, outside)
	ah := pooled(e, after, outside)
	both := pooled(e, before, outside)
	both.Merge(ah)
	f99, b99, a99, base99 := ms(fh, 99), ms(bh, 99), ms(ah, 99), ms(both, 99)
	// The median of the intervals' p99, which a few noisy seconds of the
	// host do not move: for reading the pooled p99, not judged.
	medP99 := func(d *doc) float64 {
		var v []float64
		for k := range d.Tests {
			t := &d.Tests[k]
			keep := outside(t)
			for _, iv := range t.Intervals {
				if keep(iv) && iv.ResponseMs != nil && iv.DurationS >= 0.5 {
					v = append(v, iv.ResponseMs.P99)
				}
			}
		}
		return median(v)
	}
	fmt.Printf("  the intervals' median p99 outside the windows: %.3f ms; without failover %.3f ms before, %.3f ms after\n",
		medP99(d), medP99(before), medP99(after))
	judge(fmt.Sprintf("p99 outside the windows %.3f ms vs %.3f ms without failover (%+.0f%%; before %.3f ms, after %.3f ms: they differ by %+.0f%%): within 20%%",
		f99, base99, pct(f99, base99), b99, a99, pct(a99, b99)), math.Abs(pct(f99, base99)) <= 20)
}

// pooled merges the response histograms of every test's intervals that
// keep selects.
func pooled(e *env, d *doc, keep func(*test) func(interval) bool) *hdrhistogram.Histogram {
	h := histo.New()
	for k := range d.Tests {
		t := &d.Tests[k]
		x, _, err := pool(t.Intervals, keep(t))
		e.check(err)
		h.Merge(x)
	}
	return h
}

func countKind(t *test, kind string) int {
	n := 0
	for _, e := range t.Events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// rateOf reads a rate as pacer does: 5000, 5k, 1.5M.
func rateOf(s string) float64 {
	mult := 1.0
	switch {
	case len(s) > 0 && (s[len(s)-1] == 'k' || s[len(s)-1] == 'K'):
		mult, s = 1e3, s[:len(s)-1]
	case len(s) > 0 && s[len(s)-1] == 'M':
		mult, s = 1e6, s[:len(s)-1]
	}
	var v float64
	fmt.Sscan(s, &v)
	return v * mult
}
