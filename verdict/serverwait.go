package verdict

import (
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/report"
)

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
//
// A server of several threads is weighed by the thread that waited most
// (ProcUsage.ThreadWaitShare): a request meets one thread's waits, and
// the sum over threads counts every thread waiting at once (pacer serve
// near its capacity on a 2-vCPU VM: 0.89 summed over 27 threads, 0.23 for
// the most-waiting one). For redis-server, whose main thread does the
// work, the two are nearly the same.
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
	// all is the usage over the whole test (over its intervals, when it
	// has them).
	all host.ProcUsage
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
func serverWaitOf(t *report.Test, from, dur time.Duration, metric string, boundMs float64) serverWait {
	f := t.MustFacts()
	if f.Server == nil {
		return serverWait{}
	}
	ivs, err := t.Series()
	if err != nil || len(ivs) == 0 {
		return serverWait{u: f.Server.Usage, ok: f.Server.Usage.Seconds > 0, all: f.Server.Usage}
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
		if iv.ServerProcess.ThreadWaitShare() < idleBelow && !iv.Service.Empty() {
			if h, err := iv.Service.Histogram(); err == nil {
				calm.Add(*iv.ServerProcess)
				calmHists = append(calmHists, h)
			}
		}
	}
	w := serverWait{u: all, ok: all.Seconds > 0, calm: calm, all: all}
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

// serverCores is the server process's CPU over the whole test, in
// cores.
func (w serverWait) serverCores() float64 {
	if w.all.Seconds <= 0 {
		return 0
	}
	return w.all.CPU.Seconds() / w.all.Seconds
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
		w.calm.Seconds, report.ShareText(w.calm.ThreadWaitShare()), metric, w.calmService)
}

// explains reports whether the server's waits for a CPU can explain a
// miss at quantile q (percent): it waited for a CPU at least the share
// of the time the percentile leaves beyond it (1 − q), and at least
// WaitExplainsShare.
func (w serverWait) explains(q float64) bool {
	if !w.ok {
		return false
	}
	return w.u.ThreadWaitShare() >= max(beyond(q), WaitExplainsShare)
}

// MinDiskLooks is the least number of looks at the server's state that
// found its busiest thread waiting for the disk before the disk can take
// a miss: fewer are a few unlucky looks, not a share.
const MinDiskLooks = 10

// diskExplains reports whether the server's waits for the disk can
// explain a miss at quantile q (percent): its busiest thread was found
// waiting for the disk in at least the share of the looks the percentile
// leaves beyond it (1 − q), at least WaitExplainsShare, and in
// MinDiskLooks looks. That time is the server's own: its fsyncs and
// writes, whatever the host's CPUs did.
func (w serverWait) diskExplains(q float64) bool {
	return w.ok && w.u.DiskLooks >= MinDiskLooks && w.u.DiskWaitShare() >= max(beyond(q), WaitExplainsShare)
}

// diskWords says what diskExplains found.
func (w serverWait) diskWords() string {
	in := "in the test"
	if w.failing {
		in = "in the intervals that missed"
	}
	return fmt.Sprintf("the server process's busiest thread was waiting for the disk in %d of %d looks at its state %s (%s of the time)",
		w.u.DiskLooks, w.u.Looks, in, report.ShareText(w.u.DiskWaitShare()))
}

// idle reports whether the server's waits for a CPU cannot explain a miss
// at quantile q: it waited under WaitIdleShare of the share beyond the
// percentile.
func (w serverWait) idle(q float64) bool {
	return w.ok && w.u.ThreadWaitShare() < WaitIdleShare*beyond(q)
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
	if u := w.u; u.Threads > 1 && u.ThreadWait > 0 && u.ThreadWait < u.Wait*9/10 {
		return fmt.Sprintf("the server process's most-waiting thread waited %s for a CPU in %.1f s%s (%s of the time; its %d threads %s in all, %s per time slice)",
			report.WaitText(u.ThreadWait), u.Seconds, in, report.ShareText(u.ThreadWaitShare()), u.Threads, report.WaitText(u.Wait), report.WaitText(u.MeanWait()))
	}
	return fmt.Sprintf("the server process waited %s for a CPU in %.1f s%s (%s of the time, %s per time slice)",
		report.WaitText(w.u.Wait), w.u.Seconds, in, report.ShareText(w.u.ThreadWaitShare()), report.WaitText(w.u.MeanWait()))
}
