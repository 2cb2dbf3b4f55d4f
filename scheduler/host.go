package scheduler

import (
	"math"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
)

// hostWatch measures the client machine during a run: how late a sleeping
// goroutine wakes (host hiccups, package host's meter) and how busy the
// CPUs were, so that a verdict can tell the host's delays from the
// server's. A nil *hostWatch watches nothing.
type hostWatch struct {
	meter *host.Meter // nil: the meter is off
	cpu0  host.CPUSample
	cpuOK bool
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

// newHostWatch returns a watch whose meter sleeps interval (as
// hiccupInterval reads it); nothing runs before start.
func newHostWatch(interval time.Duration) *hostWatch {
	h := &hostWatch{}
	if iv := hiccupInterval(interval); iv > 0 {
		// The configuration is valid by construction: a positive interval,
		// no buckets (the interval series takes the meter's live recorder).
		h.meter, _ = host.NewMeter(host.MeterConfig{Interval: iv})
	}
	return h
}

// recorder is the hiccup meter's live recorder (nil: no meter), for the
// interval series and the live view.
func (h *hostWatch) recorder() *histo.Recorder {
	if h == nil || h.meter == nil {
		return nil
	}
	return h.meter.Live()
}

// prepare begins the CPU accounting and starts the meter, recording
// nothing yet: while the run sets itself up, before it chooses its start,
// so that none of it delays the first requests.
func (h *hostWatch) prepare() {
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

// begin starts the meter's measured window at from (the end of the
// warmup).
func (h *hostWatch) begin(from int64) {
	if h != nil && h.meter != nil {
		h.meter.From(from)
	}
}

// stop ends the watch and writes what it measured into res.
func (h *hostWatch) stop(res *Result) {
	if h == nil {
		return
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
