package experiment

import (
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Limits of the open loop's load flags.
const (
	// FIFOEntryBytes is the size of one in-flight entry of a connection's
	// FIFO (intended, written, kind), and MaxFIFOBytes the budget of all
	// FIFOs together: connections × --max-inflight × 32 B.
	FIFOEntryBytes = 32
	MaxFIFOBytes   = 4 << 30
	// MaxInflightPerConn bounds --max-inflight on one connection.
	MaxInflightPerConn = 1 << 24
)

// OpenLoad is what the open loop's load flags ask for (run, replay,
// sweep and compare have them), validated by OpenLoadFlags.Parse.
type OpenLoad struct {
	// Arrival is uniform or poisson ("" when the command has no
	// --arrival).
	Arrival string
	Pacing  scheduler.Pacing
	// MaxInflight is 0 when the command has no --max-inflight.
	MaxInflight int
	MaxBuffer   int
	// Drain is never 0: that would mean the default.
	Drain time.Duration
	// LagLimit is --lag-limit, else SLOLagLimit.
	LagLimit time.Duration
	Timeout  time.Duration
	// Backlog is 0 when the command has no --max-backlog.
	Backlog time.Duration
	// EventBound is the response time above which a request counts
	// against a topology event's window: the SLO's tightest latency
	// bound (0: the run's own default, see events.DefaultBound).
	EventBound time.Duration
	// ReadFrom is where reads go (--read-from; the primary when the
	// command has no such flag).
	ReadFrom openloop.ReadFrom
	// Visibility is --visibility's probes per second (0: none); Wait is
	// --wait (nil: none).
	Visibility float64
	Wait       *scheduler.Wait
}

// OpenLoadFlags are the open loop's load flags as given. A nil pointer is
// a flag the command does not have (Arrival, MaxInflight, Backlog) or, for
// LagLimit, one not given.
type OpenLoadFlags struct {
	Arrival     *string
	MaxInflight *int
	MaxBuffer   string
	Pacing      string
	Drain       time.Duration
	LagLimit    *time.Duration
	// Timeout is --timeout; TimeoutSet says it was given (0 is then
	// refused, not "off").
	Timeout    time.Duration
	TimeoutSet bool
	Backlog    *time.Duration
	// Conns is the connections the FIFO budget counts; SLO is --slo, which
	// bounds the default lag limit.
	Conns int
	SLO   verdict.SLO
	// ReadFrom is --read-from (nil: the command has none); Visibility
	// and Wait are --visibility and --wait (nil: not given).
	ReadFrom, Visibility, Wait *string
}

// Parse checks, in this order, --arrival, --max-inflight (with the FIFO
// budget of Conns connections), --max-buffer, --pacing, --drain,
// --lag-limit, --timeout and --max-backlog; a bad one is a usage error in
// the flag's words.
func (f OpenLoadFlags) Parse() (OpenLoad, error) {
	var l OpenLoad
	if f.Arrival != nil {
		if l.Arrival = *f.Arrival; l.Arrival != "uniform" && l.Arrival != "poisson" {
			return l, usage.Flagf("arrival", "{arrival} %q: want uniform or poisson", l.Arrival)
		}
	}
	if f.MaxInflight != nil {
		if l.MaxInflight = *f.MaxInflight; l.MaxInflight < 1 || l.MaxInflight > MaxInflightPerConn {
			return l, usage.Flagf("max-inflight", "{max-inflight} %d: want 1 to %d", l.MaxInflight, MaxInflightPerConn)
		}
		if err := checkInflightBudget(f.Conns, l.MaxInflight); err != nil {
			return l, err
		}
	}
	var err error
	if l.MaxBuffer, err = parseMaxBuffer(f.MaxBuffer); err != nil {
		return l, err
	}
	var ok bool
	if l.Pacing, ok = scheduler.ParsePacing(f.Pacing); !ok {
		return l, usage.Flagf("pacing", "{pacing} %q: want auto, precise or coarse", f.Pacing)
	}
	if l.Drain = f.Drain; l.Drain < 0 {
		return l, usage.Flagf("drain", "{drain} %s: must not be negative", l.Drain)
	}
	if l.Drain == 0 {
		l.Drain = time.Nanosecond // zero would mean the default
	}
	l.LagLimit = SLOLagLimit(l.Pacing, f.SLO)
	l.EventBound = f.SLO.TightestLatency()
	if f.LagLimit != nil {
		if l.LagLimit = *f.LagLimit; l.LagLimit <= 0 {
			return l, usage.Flagf("lag-limit", "{lag-limit} %s: want a positive duration", l.LagLimit)
		}
	}
	if l.Timeout = f.Timeout; l.Timeout < 0 || (f.TimeoutSet && l.Timeout == 0) {
		return l, usage.Flagf("timeout", "{timeout} %s: want a positive duration", l.Timeout)
	}
	if f.Backlog != nil {
		if l.Backlog = *f.Backlog; l.Backlog <= 0 {
			return l, usage.Flagf("max-backlog", "{max-backlog} %s: want a positive duration", l.Backlog)
		}
	}
	if f.ReadFrom != nil {
		if l.ReadFrom, ok = openloop.ParseReadFrom(*f.ReadFrom); !ok {
			return l, usage.Flagf("read-from", "{read-from} %q: want primary, replicas or prefer-replicas", *f.ReadFrom)
		}
	}
	if f.Visibility != nil {
		r, err := timeline.ParseRate(*f.Visibility)
		if err != nil || r.PerSecond() <= 0 || r.PerSecond() > MaxVisibilityRate {
			return l, usage.Flagf("visibility", "{visibility} %q: want probes per second, above 0 and at most %d", *f.Visibility, MaxVisibilityRate)
		}
		l.Visibility = r.PerSecond()
	}
	if f.Wait != nil {
		if l.Wait, err = ParseWait(*f.Wait); err != nil {
			return l, err
		}
	}
	return l, nil
}

// MaxVisibilityRate bounds --visibility: each probe is a write and, on
// each replica, a poll every millisecond until it is seen.
const MaxVisibilityRate = 10000

// ParseWait reads --wait N[,TIMEOUT]: WAIT for N replicas, the server
// waiting at most TIMEOUT (a duration; 0, the default, waits for ever as
// WAIT does, in whole milliseconds).
func ParseWait(s string) (*scheduler.Wait, error) {
	n, t, hasT := strings.Cut(s, ",")
	w := &scheduler.Wait{}
	var err error
	if w.Replicas, err = strconv.Atoi(strings.TrimSpace(n)); err != nil || w.Replicas < 1 || w.Replicas > 1000 {
		return nil, usage.Flagf("wait", "{wait} %q: want N[,TIMEOUT], N the replicas to wait for (1 to 1000), such as 1 or 2,100ms", s)
	}
	if hasT {
		if w.Timeout, err = time.ParseDuration(strings.TrimSpace(t)); err != nil || w.Timeout < 0 || w.Timeout%time.Millisecond != 0 {
			return nil, usage.Flagf("wait", "{wait} %q: TIMEOUT %q: want whole milliseconds, such as 100ms or 2s (0: for ever)", s, t)
		}
	}
	return w, nil
}

// Open is the scheduler's configuration of these flags, without the
// timeline's rate and bounds.
func (l OpenLoad) Open(interval time.Duration) openloop.Config {
	cfg := openloop.Config{Pacing: l.Pacing, Drain: l.Drain, LagLimit: l.LagLimit, Timeout: l.Timeout,
		Interval: interval, MaxBacklog: l.Backlog}
	cfg.EventBound, cfg.ReadFrom, cfg.Wait = l.EventBound, l.ReadFrom, l.Wait
	return cfg
}

// parseMaxBuffer reads --max-buffer: from 1 byte to twice the largest
// value.
func parseMaxBuffer(s string) (int, error) {
	n, err := bytesize.Parse(s)
	if err != nil || n < 1 || n > scenarios.MaxValueSize*2 {
		return 0, usage.Flagf("max-buffer", "{max-buffer} %q: want a size from 1 byte to %s, such as 2MiB, 512KiB, 4MB or 65536", s, bytesize.Format(scenarios.MaxValueSize*2))
	}
	return int(n), nil
}

// checkInflightBudget refuses FIFOs that together could exceed
// MaxFIFOBytes.
func checkInflightBudget(conns, inflight int) error {
	if total := int64(conns) * int64(inflight) * FIFOEntryBytes; total > MaxFIFOBytes {
		return usage.Flagf("c", "{c} %d × {max-inflight} %d × %d B = %s of in-flight entries; at most %s: lower {c} or {max-inflight}",
			conns, inflight, FIFOEntryBytes, bytesize.Format(total), bytesize.Format(MaxFIFOBytes))
	}
	return nil
}

// SLOLagShare is the share of the tightest latency bound of --slo the
// generator's own send lag may take at p99 when --lag-limit is not given.
const SLOLagShare = 0.10

// SLOLagLimit is the send-lag limit of an open run whose --lag-limit is
// not given: the pacing's default, capped at SLOLagShare of the tightest
// latency bound of slo. Response time is send lag + service time, so the
// lag a generator is allowed is budget the server does not get: at half
// the bound (the cap this replaces), auto pacing's 600 µs quantum under
// `--slo p99<=2ms` took 36–47% of the bound at p99 (send lag p99
// 0.61–0.71 ms beside a service time of 0.1–0.2 ms). A tenth leaves the
// server nine tenths: 200 µs for p99<=2ms, where auto pacing's quantum
// (the limit less scheduler.WakeReserve) would be under
// scheduler.MinAutoQuantum, so it paces precisely (a wake at every due
// instant; bench/pacing measures what that costs in CPU), and 500 µs for
// p99<=5ms (a 100 µs quantum). Where the machine cannot keep the lag
// within it on a quiet host, the verdict's reason says so.
func SLOLagLimit(p scheduler.Pacing, slo verdict.SLO) time.Duration {
	def := scheduler.DefaultLagLimit(p)
	if b := slo.TightestLatency(); b > 0 {
		return min(def, time.Duration(float64(b)*SLOLagShare))
	}
	return def
}
