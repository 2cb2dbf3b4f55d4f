package scheduler

import (
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/timeline"
)

// Progress is a moment's view of a running test.
type Progress struct {
	// Elapsed since the test's start.
	Elapsed time.Duration
	// Sent, Completed and Errors count requests so far.
	Sent, Completed, Errors uint64
	// InFlight counts requests written and not yet answered.
	InFlight int
	// OldestAge is how long the oldest unanswered request has waited,
	// from its intended time (open) or its send (closed); zero when none.
	OldestAge time.Duration
}

// Live lets another goroutine watch a running test, for progress lines.
// All methods are safe to call concurrently with the run.
type Live struct {
	start  atomic.Int64 // the timeline's start (set as it starts)
	counts func() (sent, completed, errors uint64, inflight int)
	oldest func() int64 // clock time of the oldest unanswered request, 0 if none
	// Duration and Requests are the planned length of the test (either
	// may be zero).
	Duration time.Duration
	Requests uint64
	// Latency is the headline latency recorder: response time in open
	// mode, latency from the send in closed mode (nanoseconds).
	Latency *histo.Recorder
	// Micros is the closed loop's redis-benchmark-compatible histogram
	// (whole microseconds, 10 µs to 3 s); nil in open mode.
	Micros *histo.Recorder
	// Response, Service, Lag and Receive are the test's cumulative
	// recorders (nanoseconds). In closed mode Response and Service are
	// both the latency from the send, and Lag is nil. Hiccups records the
	// host's hiccups (nil without the meter).
	Response, Service, Lag, Receive, Hiccups *histo.Recorder
	// TargetRate is the timeline's rate (zero: an unthrottled closed loop).
	TargetRate timeline.Rate
	totals     func() Totals
	conns      func() Connections
	joins      func(from int) []NodeJoin

	// Warmup is the leading part of the timeline that is not measured.
	Warmup time.Duration
	// commands are a mix's commands (nil for one command).
	commands []LiveCommand
	// Stages is the rate the timeline follows, nil for a constant rate.
	Stages *timeline.Stages
	// ServerProcess, when set, reads what a local server's process did
	// with the CPUs since the test's measured window began (false before
	// it began, or when a reading fails).
	ServerProcess func() (host.ProcUsage, bool)
	// topo is the topology's part (see live_topology.go).
	topo liveTopology
}

// LiveHooks are how a driver's run answers its Live view: each is
// called from the watching goroutine, concurrently with the run. Counts
// is required; the others may be nil (no totals beyond Counts, no
// oldest request, connections or joins, one command).
type LiveHooks struct {
	Counts   func() (sent, completed, errors uint64, inflight int)
	Oldest   func() int64 // clock time of the oldest unanswered request, 0 if none
	Totals   func() Totals
	Conns    func() Connections
	Joins    func(from int) []NodeJoin
	Nodes    func() []LiveNode
	Events   func() []events.Event
	Commands []LiveCommand
}

// Hook makes l read the run through h; a driver calls it once, before it
// hands l out.
func (l *Live) Hook(h LiveHooks) {
	l.counts, l.oldest, l.totals, l.conns, l.joins, l.commands = h.Counts, h.Oldest, h.Totals, h.Conns, h.Joins, h.Commands
	l.topo.nodes, l.topo.events = h.Nodes, h.Events
}

// Begin marks the start of the test's timeline at t0 (Now's clock),
// from which Progress counts.
func (l *Live) Begin(t0 int64) { l.start.Store(t0) }

// T0 is the start of the test's timeline (Now's clock), 0 before Begin.
func (l *Live) T0() int64 { return l.start.Load() }

// Connections is a moment's view of an open run's connections.
type Connections struct {
	// Open counts the live connections of Of; Lost those that died so far and
	// Reconnects the replacements that came up.
	Open, Of         int
	Lost, Reconnects uint64
}

// NodeJoin is a Redis Cluster primary that joined an open run (it was not
// in the slot map the run started with): its address, and how many of its
// connections opened (Open of Of; none: Err says why).
type NodeJoin struct {
	Addr     string
	Open, Of int
	Err      string
}

// Joins returns the primaries that joined the run so far, from the
// from-th on (in the order their connections were installed); nil
// without Redis Cluster.
func (l *Live) Joins(from int) []NodeJoin {
	if l.joins == nil {
		return nil
	}
	return l.joins(from)
}

// Connections returns the run's connections now; ok is false for a run
// that does not replace them (closed loops).
func (l *Live) Connections() (Connections, bool) {
	if l.conns == nil {
		return Connections{}, false
	}
	return l.conns(), true
}

// Totals returns the test's cumulative counts so far.
func (l *Live) Totals() Totals {
	if l.totals != nil {
		return l.totals()
	}
	s, c, e, _ := l.counts()
	return Totals{Counts: Counts{Sent: s, Completed: c, Errors: e}}
}

// Progress returns the current counts.
func (l *Live) Progress() Progress {
	now := nanotime()
	s, c, e, f := l.counts()
	p := Progress{Elapsed: time.Duration(now - l.start.Load()), Sent: s, Completed: c, Errors: e, InFlight: f}
	if l.oldest != nil {
		if t := l.oldest(); t != 0 && t < now {
			p.OldestAge = time.Duration(now - t)
		}
	}
	return p
}

// LiveCommand is one command of a mix in a running test, for live
// metrics: its counters as replies arrive and its cumulative recorders
// (nanoseconds). The recorders are nil in a mix too large to be timed per
// command (MaxTimedCommands); Lag is nil in an unthrottled closed loop,
// and a closed loop's Service is its Response (one latency, from the
// send).
type LiveCommand struct {
	Name                            string
	Completed, ReplyErrors          func() uint64
	Response, Service, Lag, Receive *histo.Recorder
}

// Commands returns the commands of a mix, in kind order; nil for a test
// of one command (its figures are the test's).
func (l *Live) Commands() []LiveCommand { return l.commands }

// LiveCommands describes a run's per-command stats for its live view.
func LiveCommands(names []string, ks []CommandStats, closed bool) []LiveCommand {
	if len(ks) == 0 {
		return nil
	}
	out := make([]LiveCommand, len(ks))
	for i := range ks {
		k := &ks[i]
		out[i] = LiveCommand{Name: names[i], Completed: k.Completed.Load, ReplyErrors: k.Errors.Load,
			Response: k.Response, Service: k.Service, Lag: k.Lag, Receive: k.Receive}
		if closed {
			out[i].Service = k.Response
		}
	}
	return out
}
