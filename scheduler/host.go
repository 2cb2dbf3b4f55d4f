package scheduler

import (
	"math"
	"sync"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
)

// HostWatch measures the client machine during a run: how late a sleeping
// goroutine wakes (host hiccups, package host's meter) and how busy the
// CPUs were, so that a verdict can tell the host's delays from the
// server's. A nil *HostWatch watches nothing.
type HostWatch struct {
	meter *host.Meter // nil: the meter is off
	cpu0  host.CPUSample
	cpuOK bool
	// server is the local server's process, whose threads proc reads
	// (nil: not watched); procMu serialises the readings (the interval
	// series' goroutine reads it at each interval's end).
	server *host.ServerProcess
	procMu sync.Mutex
	proc   *host.ProcWatch
	// procStart is the reading where the measured window began (for the
	// live view), guarded by procMu.
	procStart host.ProcReading
}

// hiccupInterval is the meter's sleep for a configured interval: 0 is
// host.DefaultInterval, a negative one turns the meter off (0).
func hiccupInterval(configured time.Duration) time.Duration {
	switch {
	case configured < 0:
		return 0
	case configured == 0:
		return host.DefaultInterval
	}
	return configured
}

// NewHostWatch returns a watch whose meter sleeps interval (as
// hiccupInterval reads it) and that reads the scheduler statistics of
// server's process (nil: none, or pacer's own); nothing runs before
// start.
func NewHostWatch(interval time.Duration, server *host.ServerProcess) *HostWatch {
	h := &HostWatch{}
	if server != nil && !server.Self && server.PID > 0 {
		h.server, h.proc = server, host.NewProcWatch(server.PID)
	}
	if iv := hiccupInterval(interval); iv > 0 {
		// The configuration is valid by construction: a positive interval,
		// no buckets (the interval series takes the meter's live recorder).
		h.meter, _ = host.NewMeter(host.MeterConfig{Interval: iv})
	}
	return h
}

// Recorder is the hiccup meter's live recorder (nil: no meter), for the
// interval series and the live view.
func (h *HostWatch) Recorder() *histo.Recorder {
	if h == nil || h.meter == nil {
		return nil
	}
	return h.meter.Live()
}

// readServer reads the server process's counters now; a reading that
// fails (the process ended) is not OK.
func (h *HostWatch) readServer() host.ProcReading {
	if h == nil || h.proc == nil {
		return host.ProcReading{}
	}
	h.procMu.Lock()
	defer h.procMu.Unlock()
	r, _ := h.proc.Read()
	return r
}

// ServerReader returns the reader of the server process's counters, for
// the interval series (Series.SetServer); nil when the server's process
// is not watched.
func (h *HostWatch) ServerReader() func() host.ProcReading {
	if h == nil || h.proc == nil {
		return nil
	}
	return h.readServer
}

// ServerTotal is the server process's usage over a test: its
// intervals' added up (nil when it was not watched, or never read).
func (h *HostWatch) ServerTotal(ivs []Interval) *ServerProcess {
	if h == nil || h.server == nil {
		return nil
	}
	total := &ServerProcess{ServerProcess: *h.server}
	for _, iv := range ivs {
		if iv.ServerProcess != nil {
			total.Usage.Add(*iv.ServerProcess)
		}
	}
	if total.Usage.Seconds <= 0 {
		return nil
	}
	return total
}

// Prepare begins the CPU accounting and starts the meter, recording
// nothing yet: while the run sets itself up, before it chooses its start,
// so that none of it delays the first requests.
func (h *HostWatch) Prepare() {
	if h == nil {
		return
	}
	s, err := host.ReadCPU()
	h.cpu0, h.cpuOK = s, err == nil
	if h.meter != nil {
		h.meter.From(math.MaxInt64)
		h.meter.Start()
	}
}

// Begin starts the meter's measured window at from (the end of the
// warmup), and the live view's count of the server process's usage.
func (h *HostWatch) Begin(from int64) {
	if h != nil && h.meter != nil {
		h.meter.From(from)
	}
	if h != nil && h.proc != nil {
		r := h.readServer()
		h.procMu.Lock()
		h.procStart = r
		if r.OK() {
			h.proc.SampleStates() // from the threads this reading found
		}
		h.procMu.Unlock()
	}
}

// LiveServer is the live view's reader of the server process's usage
// since begin (nil when it is not watched).
func (h *HostWatch) LiveServer() func() (host.ProcUsage, bool) {
	if h == nil || h.proc == nil {
		return nil
	}
	return func() (host.ProcUsage, bool) {
		now := h.readServer()
		h.procMu.Lock()
		start := h.procStart
		h.procMu.Unlock()
		if !now.OK() || !start.OK() {
			return host.ProcUsage{}, false
		}
		return now.Since(start), true
	}
}

// Stop ends the watch and writes what it measured into res.
func (h *HostWatch) Stop(res *Result) {
	if h == nil {
		return
	}
	if h.proc != nil {
		h.procMu.Lock()
		h.proc.StopSampling()
		h.procMu.Unlock()
	}
	if h.meter != nil {
		m := h.meter.Stop()
		res.Hiccups, res.HiccupInterval = m.Total, m.Interval
	}
	if !h.cpuOK {
		return
	}
	s, err := host.ReadCPU()
	if err != nil {
		return
	}
	u := host.Usage(h.cpu0, s)
	res.CPU = HostCPU{Available: u.Available, Seconds: u.Seconds, Busy: u.HostBusy, Steal: u.HostSteal, Self: u.Self, CPUs: u.CPUs}
}
