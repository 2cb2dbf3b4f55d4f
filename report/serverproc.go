package report

import (
	"fmt"
	"time"

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
	// ThreadWaitS is the wait of the thread that waited most (a server of
	// several threads' requests meet one thread's waits, not their sum),
	// ThreadWaitShare it per wall second: the share the verdict weighs.
	// Absent from older documents.
	ThreadWaitS     float64 `json:"thread_wait_s,omitempty"`
	ThreadWaitShare float64 `json:"thread_wait_share,omitempty"`
	// StateLooks is how many times pacer looked at the threads' states
	// (every 10 ms), DiskWaitLooks how many of those found the busiest
	// thread waiting for the disk (uninterruptible sleep: an fsync), and
	// DiskWaitShare their ratio. Absent when not sampled.
	StateLooks    uint64  `json:"state_looks,omitempty"`
	DiskWaitLooks uint64  `json:"disk_wait_looks,omitempty"`
	DiskWaitShare float64 `json:"disk_wait_share,omitempty"`
}

// serverProcessJSON is u as the JSON holds it.
func serverProcessJSON(u host.ProcUsage) *ServerProcess {
	return &ServerProcess{
		Seconds: Round(u.Seconds, 6), CPUS: Round(u.CPU.Seconds(), 6), CPUWaitS: Round(u.Wait.Seconds(), 6),
		WaitShare: Round(u.WaitShare(), 6), Timeslices: u.Slices, MeanWaitUs: Round(float64(u.MeanWait())/1e3, 3),
		InvoluntarySwitches: u.Involuntary, VoluntarySwitches: u.Voluntary, Threads: u.Threads,
		ThreadWaitS: Round(u.ThreadWait.Seconds(), 6), ThreadWaitShare: Round(u.ThreadWaitShare(), 6),
		StateLooks: u.Looks, DiskWaitLooks: u.DiskLooks, DiskWaitShare: Round(u.DiskWaitShare(), 6),
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
		Voluntary: s.VoluntarySwitches, Involuntary: s.InvoluntarySwitches, Threads: s.Threads, ThreadWait: exactSeconds(s.ThreadWaitS),
		Looks: s.StateLooks, DiskLooks: s.DiskWaitLooks,
	}
}

// serverProcessOf rebuilds a test's server process from its JSON.
func serverProcessOf(s *ServerProcess) *scheduler.ServerProcess {
	if s == nil {
		return nil
	}
	return &scheduler.ServerProcess{ServerProcess: host.ServerProcess{PID: s.PID, Name: s.Name, How: s.How}, Usage: s.usage()}
}

// WaitText words a wait: "3.2 ms", "41 µs".
func WaitText(d time.Duration) string {
	if d >= time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(d)/1e3)
}

// ShareText words a share: "0.3%".
func ShareText(v float64) string {
	switch {
	case v >= 0.1:
		return fmt.Sprintf("%.0f%%", 100*v)
	case v >= 0.001:
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	return fmt.Sprintf("%.2f%%", 100*v)
}
