package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
)

// replicas: a primary with two replicas; run --read-from replicas
// --visibility 100 --rate 10k -t get, one replica frozen (SIGSTOP, then
// SIGCONT) for 200 ms at 10 s.
func replicas(c config) {
	const pause = 200 * time.Millisecond
	e := newEnv()
	defer e.stop()
	set := redistest.StartReplicated(e, 2)
	waitStreaming(e, set.Primary, set.Replicas...)
	dir := c.dir(e, "replicas")
	rate, at := c.rateOr("10k"), c.scaled(10*time.Second)
	frozen, other := set.Replicas[1], set.Replicas[0]
	js := filepath.Join(dir, "replicas.json")
	args := []string{"run", "-p", set.Primary.PortString(), "--read-from", "replicas", "--visibility", "100", "--rate", rate,
		"-t", "get", "-r", "100000", "--duration", c.duration.String()}
	fmt.Printf("primary %s, replicas %s %s\n", set.Primary.Addr, other.Addr, frozen.Addr)
	fmt.Printf("pacer %s --json FILE; %s frozen for %v at %v\n", join(args), frozen.Addr, pause, at.Round(time.Millisecond))
	resetStats(e, set.Nodes()...)
	p := e.startPacer(c.bin, c.duration+2*time.Minute, append(args, "--json", js)...)
	sleepUntil(p.started, at)
	p0 := time.Now()
	e.check(frozen.PauseFor(pause))
	p1 := time.Now()
	o := p.wait()
	fmt.Printf("run (load %s): exit %d\n", loadAverage(), o.code)
	c.show(o, "  per node", "  visibility lag")
	if o.code != 0 && o.code != 4 {
		judge(fmt.Sprintf("the run: exit %d: %s", o.code, tail(o.stderr)), false)
		return
	}
	d, err := readDoc(js)
	e.check(err)
	t := &d.Tests[0]
	fmt.Printf("  %s\n", t.hostLine())
	t0, err := t.start()
	e.check(err)
	rel := func(x time.Time) float64 { return x.Sub(t0).Seconds() }

	// Where the GETs went, by the servers' own commandstats.
	gp, g0, g1 := calls(set.Primary, "get"), calls(other, "get"), calls(frozen, "get")
	sent := t.Counts.Sent
	share := 100 * float64(g0+g1) / float64(max(sent, 1))
	judge(fmt.Sprintf("GETs sent %d; the replicas' commandstats %d + %d = %.2f%% of them (≥ 95%%), the primary's %d (none)",
		sent, g0, g1, share, gp), share >= 95 && gp == 0)

	// Visibility lag per replica, and the freeze.
	v := t.Visibility
	if v == nil || len(v.Replicas) != 2 {
		judge("visibility lag per replica: the result has no visibility of two replicas", false)
		return
	}
	by := map[string]*visReplica{}
	for i := range v.Replicas {
		r := &v.Replicas[i]
		by[r.Addr] = r
		p50, p99, mx := 0.0, 0.0, 0.0
		if r.VisibilityMs != nil {
			p50, p99, mx = r.VisibilityMs.P50, r.VisibilityMs.P99, r.VisibilityMs.Max
		}
		fmt.Printf("    visibility %s: %d probes, seen %d, lost %d; p50 %.3f ms, p99 %.3f ms, max %.3f ms over the run; %d intervals\n",
			r.Addr, v.Probes, r.Seen, r.Lost, p50, p99, mx, len(r.Intervals))
	}
	fr, ot := by[frozen.Addr], by[other.Addr]
	judge(fmt.Sprintf("--visibility 100 reports a lag per replica: %s and %s", other.Addr, frozen.Addr),
		fr != nil && ot != nil && fr.Seen > 0 && ot.Seen > 0 && fr.VisibilityMs != nil && ot.VisibilityMs != nil)
	if fr == nil || ot == nil {
		return
	}
	// The freeze's probes are seen at its end, in the interval that holds
	// the SIGCONT or the next (a probe's lag is recorded when it is seen):
	// the frozen replica's worst of those, and the other's p99 there.
	iv := func(r *visReplica, at float64) float64 {
		for _, x := range r.Intervals {
			if x.StartS == at && x.VisibilityMs != nil {
				return x.VisibilityMs.P99
			}
		}
		return 0
	}
	near := func(r *visReplica, from, to float64) (float64, float64) {
		at, p := -1.0, 0.0
		for _, x := range r.Intervals {
			if x.StartS+x.DurationS > from && x.StartS <= to && x.VisibilityMs != nil && x.VisibilityMs.P99 > p {
				at, p = x.StartS, x.VisibilityMs.P99
			}
		}
		return at, p
	}
	worst := func(r *visReplica) (float64, float64) {
		at, p := -1.0, 0.0
		for _, x := range r.Intervals {
			if x.VisibilityMs != nil && x.VisibilityMs.P99 > p {
				at, p = x.StartS, x.VisibilityMs.P99
			}
		}
		return at, p
	}
	end := rel(p1)
	fs, fp := near(fr, end, end+0.5)
	op := iv(ot, fs)
	ow, owp := worst(ot)
	fmt.Printf("  frozen %.3f–%.3f s; whole-run p99: frozen %.3f ms, other %.3f ms (%d probes a replica: a 200 ms freeze delays about 20 of them, under 1%%, so it moves the interval's p99, not the run's)\n",
		rel(p0), end, fr.VisibilityMs.P99, ot.VisibilityMs.P99, v.Probes)
	judge(fmt.Sprintf("visibility p99 in the interval of the freeze (%.0f s): frozen %s %.3f ms (> 150 ms), other %s %.3f ms (< 150 ms; its worst interval, any cause, %.3f ms at %.0f s)",
		fs, frozen.Addr, fp, other.Addr, op, owp, ow), fp > 150 && op < 150)
}
