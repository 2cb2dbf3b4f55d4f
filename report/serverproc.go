package report

import (
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/scheduler"
)

// ServerProcess is what a local server's process did with the CPUs
// during a test or an interval (tests[].server_process,
// tests[].intervals[].server_process): its threads' CPU time, their time
// runnable but waiting for a CPU, the time slices they ran in and their
// context switches, from /proc/PID/task/*/schedstat and status. PID, Name
// and How say which process and how pacer found it (the test's only).
type ServerProcess struct {
	PID  int    `json:"pid,omitempty"`
	Name string `json:"name,omitempty"`
	How  string `json:"how,omitempty"`
	// Seconds is the wall time the figures span.
	Seconds float64 `json:"seconds"`
	// CPUS is the threads' CPU time; CPUWaitS their wait for a CPU.
	CPUS     float64 `json:"cpu_s"`
	CPUWaitS float64 `json:"cpu_wait_s"`
	// WaitShare is CPUWaitS per wall second: for a single-threaded server
	// the share of the time it was runnable but not running.
	WaitShare float64 `json:"wait_share"`
	// Timeslices is how many slices the threads ran in (every wake-up and
	// preemption starts one); MeanWaitUs the wait per slice.
	Timeslices uint64  `json:"timeslices"`
	MeanWaitUs float64 `json:"mean_wait_per_timeslice_us"`
	// InvoluntarySwitches are preemptions while runnable;
	// VoluntarySwitches the times the threads blocked.
	InvoluntarySwitches uint64 `json:"involuntary_switches"`
	VoluntarySwitches   uint64 `json:"voluntary_switches"`
	Threads             int    `json:"threads"`
}

// serverProcessJSON is u as the JSON holds it.
func serverProcessJSON(u host.ProcUsage) *ServerProcess {
	return &ServerProcess{
		Seconds: round(u.Seconds, 6), CPUS: round(u.CPU.Seconds(), 6), CPUWaitS: round(u.Wait.Seconds(), 6),
		WaitShare: round(u.WaitShare(), 6), Timeslices: u.Slices, MeanWaitUs: round(float64(u.MeanWait())/1e3, 3),
		InvoluntarySwitches: u.Involuntary, VoluntarySwitches: u.Voluntary, Threads: u.Threads,
	}
}

// testServerProcess is a run's server process as the test's JSON holds
// it (nil: not watched).
func testServerProcess(sp *scheduler.ServerProcess) *ServerProcess {
	if sp == nil {
		return nil
	}
	j := serverProcessJSON(sp.Usage)
	j.PID, j.Name, j.How = sp.PID, sp.Name, sp.How
	return j
}

// usage is the JSON's figures back as a host.ProcUsage (to the
// nanosecond the JSON keeps).
func (s *ServerProcess) usage() host.ProcUsage {
	if s == nil {
		return host.ProcUsage{}
	}
	return host.ProcUsage{
		Seconds: s.Seconds, CPU: exactSeconds(s.CPUS), Wait: exactSeconds(s.CPUWaitS), Slices: s.Timeslices,
		Voluntary: s.VoluntarySwitches, Involuntary: s.InvoluntarySwitches, Threads: s.Threads,
	}
}

// serverProcessOf rebuilds a test's server process from its JSON.
func serverProcessOf(s *ServerProcess) *scheduler.ServerProcess {
	if s == nil {
		return nil
	}
	return &scheduler.ServerProcess{ServerProcess: host.ServerProcess{PID: s.PID, Name: s.Name, How: s.How}, Usage: s.usage()}
}

// waitText words a wait: "3.2 ms", "41 µs".
func waitText(d time.Duration) string {
	if d >= time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(d)/1e3)
}

// shareText words a share: "0.3%".
func shareText(v float64) string {
	switch {
	case v >= 0.1:
		return fmt.Sprintf("%.0f%%", 100*v)
	case v >= 0.001:
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	return fmt.Sprintf("%.2f%%", 100*v)
}

// The server process's wait for a CPU, held against a clause at
// quantile q (a share 1 − q of the requests lies beyond it). A
// single-threaded server that is runnable but waits for a CPU a share w
// of the time delays the requests that arrive meanwhile, about a share w
// of them (arrivals at random instants see the time averages), and those
// alone: its backlog clears in microseconds once it runs. So its waits
// can explain a miss at q only when w reaches 1 − q, and cannot when w
// stays under half of it (most of the requests beyond the percentile then
// met no wait). Measured on the 2-vCPU VM pacer is developed on
// (bench/gate, 10k GET/s against a local redis-server): see docs/ci.md.
const (
	// WaitExplainsShare is the least wait share, whatever the quantile,
	// from which waits count as explaining a miss: below it a host is
	// not busy enough for its load to be the story.
	WaitExplainsShare = 0.02
	// WaitIdleShare is the share of 1 − q under which the server counts
	// as not waiting for a CPU.
	WaitIdleShare = 0.5
)

// serverWait is the server process's wait over the intervals of a
// clause's scope that miss its bound on service time (all of the scope's
// when none does alone).
type serverWait struct {
	u  host.ProcUsage
	ok bool
	// failing says the usage is that of the failing intervals.
	failing bool
	// calm is the usage over the intervals in which the server process
	// did not wait (idle at the clause's quantile), calmService their
	// service time at the clause's metric (ms) and calmCount its samples.
	calm        host.ProcUsage
	calmService float64
	calmCount   int64
}

// serverWaitOf is the server process's usage over the intervals of
// [from, from+dur) (dur 0: the whole test) whose service time at metric
// misses boundMs, or over all of them when none does.
func serverWaitOf(t *Test, from, dur time.Duration, metric string, boundMs float64) serverWait {
	f := t.mustFigures()
	if f.server == nil {
		return serverWait{}
	}
	ivs, err := t.series()
	if err != nil || len(ivs) == 0 {
		return serverWait{u: f.server.Usage, ok: f.server.Usage.Seconds > 0}
	}
	var all, failing, calm host.ProcUsage
	var calmHists []*hdrhistogram.Histogram
	idleBelow := WaitIdleShare * beyond(metricQuantile(metric))
	for _, iv := range ivs {
		if iv.ServerProcess == nil || dur > 0 && (iv.Start < from || iv.Start >= from+dur) {
			continue
		}
		all.Add(*iv.ServerProcess)
		if v, ok := iv.Service.Summary.Metric(metric); ok && iv.Service.Summary.Count > 0 && v > boundMs {
			failing.Add(*iv.ServerProcess)
		}
		if iv.ServerProcess.WaitShare() < idleBelow && !iv.Service.Empty() {
			if h, err := iv.Service.Histogram(); err == nil {
				calm.Add(*iv.ServerProcess)
				calmHists = append(calmHists, h)
			}
		}
	}
	w := serverWait{u: all, ok: all.Seconds > 0, calm: calm}
	if failing.Seconds > 0 {
		w.u, w.failing = failing, true
	}
	if len(calmHists) > 0 {
		h, _ := histo.Merge(calmHists...)
		s := histo.Summarize(h)
		w.calmService, _ = s.Metric(metric)
		w.calmCount = h.TotalCount()
	}
	return w
}

// calmMiss reports whether the service time of the intervals in which
// the server process did not wait for a CPU, pooled, misses the bound
// (met says what meets it) at quantile q, on enough samples to tell
// (histo.MinTailSamples beyond the percentile): the server's own time
// misses it, whatever the host did in the other intervals.
func (w serverWait) calmMiss(q float64, met func(float64) bool) bool {
	if w.calmCount == 0 || w.calm.Seconds <= 0 {
		return false
	}
	return !histo.Insufficient(w.calmCount, q) && !met(w.calmService)
}

// calmWords says what calmMiss found.
func (w serverWait) calmWords(metric string) string {
	return fmt.Sprintf("in the %.1f s in which the server process hardly waited for a CPU (%s of the time), its service %s is still %.3f ms",
		w.calm.Seconds, shareText(w.calm.WaitShare()), metric, w.calmService)
}

// explains reports whether the server's waits for a CPU can explain a
// miss at quantile q (percent): it waited for a CPU at least the share
// of the time the percentile leaves beyond it (1 − q), and at least
// WaitExplainsShare.
func (w serverWait) explains(q float64) bool {
	if !w.ok {
		return false
	}
	return w.u.WaitShare() >= max(beyond(q), WaitExplainsShare)
}

// idle reports whether the server's waits for a CPU cannot explain a miss
// at quantile q: it waited under WaitIdleShare of the share beyond the
// percentile.
func (w serverWait) idle(q float64) bool {
	return w.ok && w.u.WaitShare() < WaitIdleShare*beyond(q)
}

// beyond is the share of requests beyond quantile q (percent); the
// maximum's is one request in a thousand, the mean's a half.
func beyond(q float64) float64 {
	switch {
	case math.IsNaN(q) || q <= 0:
		return 0.5
	case q >= 100:
		return 0.001
	}
	return 1 - q/100
}

// words says what the server process's waits were: "the server process
// waited 12.3 ms for a CPU in 10.0 s (0.1% of the time, 3 µs per time
// slice)", over the intervals that missed when they are the scope.
func (w serverWait) words() string {
	in := ""
	if w.failing {
		in = " of the intervals that missed"
	}
	return fmt.Sprintf("the server process waited %s for a CPU in %.1f s%s (%s of the time, %s per time slice)",
		waitText(w.u.Wait), w.u.Seconds, in, shareText(w.u.WaitShare()), waitText(w.u.MeanWait()))
}
