package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/host"
)

// The server process's counters: what a local server's threads did with
// the CPUs while the test ran (read from /proc at the scrape; absent
// where pacer does not watch the server's process).
var (
	descServerCPU    = desc("pacer_server_process_cpu_seconds_total", "CPU time of the server's process (a target on this host), from its threads' schedstat.")
	descServerWait   = desc("pacer_server_process_cpu_wait_seconds_total", "Time the server's threads were runnable but waited for a CPU: the host's load on the server.")
	descServerSlices = desc("pacer_server_process_timeslices_total", "Time slices the server's threads ran in (every wake-up and preemption starts one).")
	descServerInvol  = desc("pacer_server_process_involuntary_switches_total", "Times the server's threads were preempted while runnable.")
	descServerLooks  = desc("pacer_server_process_state_looks_total", "Looks at the server's threads' states (every 10 ms).")
	descServerDisk   = desc("pacer_server_process_disk_wait_looks_total", "Looks that found the server's busiest thread waiting for the disk (uninterruptible sleep: an fsync, a write).")
)

// serverSnap is a server process's usage, ok when it was read.
type serverSnap struct {
	u  host.ProcUsage
	ok bool
}

func (s *serverSnap) add(o serverSnap) {
	if o.ok {
		s.u.Add(o.u)
		s.ok = true
	}
}

// serverProcess reads l's server process (not ok: not watched).
func (l liveSource) serverProcess() serverSnap {
	if l.ServerProcess == nil {
		return serverSnap{}
	}
	u, ok := l.ServerProcess()
	return serverSnap{u: u, ok: ok}
}

// collectServer sends the server process's counters.
func collectServer(ch chan<- prometheus.Metric, s serverSnap, lv []string) {
	if !s.ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(descServerCPU, prometheus.CounterValue, s.u.CPU.Seconds(), lv...)
	ch <- prometheus.MustNewConstMetric(descServerWait, prometheus.CounterValue, s.u.Wait.Seconds(), lv...)
	ch <- prometheus.MustNewConstMetric(descServerSlices, prometheus.CounterValue, float64(s.u.Slices), lv...)
	ch <- prometheus.MustNewConstMetric(descServerInvol, prometheus.CounterValue, float64(s.u.Involuntary), lv...)
	if s.u.Looks > 0 {
		ch <- prometheus.MustNewConstMetric(descServerLooks, prometheus.CounterValue, float64(s.u.Looks), lv...)
		ch <- prometheus.MustNewConstMetric(descServerDisk, prometheus.CounterValue, float64(s.u.DiskLooks), lv...)
	}
}
