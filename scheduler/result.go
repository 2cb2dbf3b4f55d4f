package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/visibility"
)

// Counts account for every scheduled request. Every request ends in exactly
// one of Completed, Errors, Timeouts and Unsent, so
//
//	Scheduled = Completed + Errors + Timeouts + Unsent
//
// Sent counts the requests fully written to a socket (Completed + Errors +
// Timeouts, less errors for requests that never left).
type Counts struct {
	Scheduled uint64 `json:"scheduled"`
	Sent      uint64 `json:"sent"`
	Completed uint64 `json:"completed"`
	Errors    uint64 `json:"errors"`
	Timeouts  uint64 `json:"timeouts"`
	Unsent    uint64 `json:"unsent"`
}

// Add adds o to c, field by field.
func (c *Counts) Add(o Counts) {
	c.Scheduled += o.Scheduled
	c.Sent += o.Sent
	c.Completed += o.Completed
	c.Errors += o.Errors
	c.Timeouts += o.Timeouts
	c.Unsent += o.Unsent
}

// Balanced reports whether the counts add up.
func (c Counts) Balanced() bool {
	return c.Scheduled == c.ended()
}

// Open counts the scheduled requests with no outcome yet (in flight, or
// not yet sent): 0 once the counts balance.
func (c Counts) Open() uint64 {
	if e := c.ended(); c.Scheduled > e {
		return c.Scheduled - e
	}
	return 0
}

// ended counts the requests with an outcome.
func (c Counts) ended() uint64 { return c.Completed + c.Errors + c.Timeouts + c.Unsent }

// CodeConnectionLost is the error code of requests in flight on a
// connection that died.
const CodeConnectionLost = "connection lost"

// CodeProtocolError is the error code of requests in flight on a
// connection that ended on a malformed reply.
const CodeProtocolError = "protocol error"

// Error codes are bounded, so that a server answering with ever new codes
// cannot grow memory or the report: each connection keeps at most
// maxCodesPerConn distinct codes, and a test's (and each command's) codes
// are trimmed to the MaxErrorCodes most frequent plus OtherErrors.
const (
	MaxErrorCodes   = 20
	OtherErrors     = "other"
	maxCodesPerConn = 64
)

// MaxErrorText bounds the first error's text kept for the report.
const MaxErrorText = 512

// ErrBadClock fails a run in which a clock reading was zero or a measured
// time came out negative: its latencies cannot be trusted.
var ErrBadClock = errors.New("clock readings were zero or went backwards")

// ClockError is the error openloop.Run and closedloop.Run return for n
// bad readings.
func ClockError(n uint64) error {
	return fmt.Errorf("%w: %d requests had a zero clock reading or a negative response, service or lag time", ErrBadClock, n)
}

// AddCode counts n replies of code in m, a connection's tally: a code not
// yet in m is counted under OtherErrors once m holds maxCodesPerConn-1
// codes, so m never holds more than maxCodesPerConn keys. An existing code
// costs no allocation.
func AddCode(m map[string]uint64, code []byte, n uint64) {
	if _, ok := m[string(code)]; ok || len(m) < maxCodesPerConn-1 {
		m[string(code)] += n
		return
	}
	m[OtherErrors] += n
}

// mergeErrorCodes adds from's counts to into (either may be nil) and
// trims the sum as a test's codes are: the MaxErrorCodes most frequent
// plus OtherErrors. For results merged across tests or loops.
func mergeErrorCodes(into, from map[string]uint64) map[string]uint64 {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = make(map[string]uint64, len(from))
	}
	for k, v := range from {
		into[k] += v
	}
	return TrimCodes(into)
}

// TrimCodes keeps the MaxErrorCodes most frequent codes of m (ties by
// name) and counts the rest under OtherErrors; the total is unchanged.
func TrimCodes(m map[string]uint64) map[string]uint64 {
	if len(m) <= MaxErrorCodes {
		return m
	}
	type kv struct {
		code string
		n    uint64
	}
	all := make([]kv, 0, len(m))
	for k, v := range m {
		if k != OtherErrors {
			all = append(all, kv{k, v})
		}
	}
	slices.SortFunc(all, func(a, b kv) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.code, b.code)
	})
	out := make(map[string]uint64, MaxErrorCodes+1)
	other := m[OtherErrors]
	for i, e := range all {
		if i < MaxErrorCodes {
			out[e.code] = e.n
		} else {
			other += e.n
		}
	}
	if other > 0 {
		out[OtherErrors] = other
	}
	return out
}

// ErrorText keeps at most MaxErrorText bytes of an error's text, cut at a
// character boundary.
func ErrorText(b []byte) string {
	if len(b) <= MaxErrorText {
		return string(b)
	}
	n := MaxErrorText
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n])
}

// Result is what one test measured: facts only. Whether they can be
// trusted, and whether they meet an SLO, is decided in one place from
// them (verdict.Judge).
type Result struct {
	Name string
	// Mode is "open" or "closed".
	Mode string
	// TargetRate is the timeline's rate (zero for an unthrottled closed loop).
	TargetRate timeline.Rate
	Arrival    string
	Pacing     string
	// PacingQuantum is the least time between the open pacer's wakes (0:
	// a wake at every due instant), from Pacing.Quantum.
	PacingQuantum time.Duration
	// PacingSteps are when and why auto pacing left that quantum for a
	// coarser one during the run, in order (none: it kept it).
	PacingSteps []PacingStep
	// Connections used.
	Connections int
	// TLS summarizes the connections' TLS handshakes; nil over plain TCP.
	TLS    *TLSHandshakes
	Counts Counts
	// T0 is the start of the timeline on the Now clock: request i was
	// intended at T0 + Timeline.Offset(i).
	T0 int64
	// FirstWrite is when the first request was written, on the same clock
	// (open mode; 0 when none was): no later than the first request's
	// intended time plus its send lag.
	FirstWrite int64
	// Window is the measured window: from the first intended send (the
	// end of the warmup, if any) to the later of the timeline's end and
	// the last reply.
	Window time.Duration
	// SendWindow is, for a throttled closed loop, how long sending took:
	// from the start to the later of the last write and the timeline's
	// instant just past the last request sent. Replies still arriving after
	// it are no shortfall of the load. Zero elsewhere.
	SendWindow time.Duration
	// Response (arrival − intended), Service (arrival − written) and Lag
	// (written − intended), in nanoseconds; a reply's arrival is the
	// kernel's receive timestamp of its last bytes (ReceiveClock
	// "kernel"), or where none was given the instant the reader had them.
	// Response and Service hold the completed requests and, at their age
	// when the run gave up on them, the timeouts; Lag holds every sent
	// request.
	Response, Service, Lag *hdrhistogram.Histogram
	// Receive is the receive lag of every completed request: the instant
	// the reader had its reply − its arrival, the generator's lateness on
	// the way in (as Lag is on the way out). Zero where no kernel timestamp
	// was given.
	Receive *hdrhistogram.Histogram
	// ReceiveClock is "kernel" when (at least 99% of) the replies carried
	// the kernel's receive timestamp, "read" otherwise: arrival was then
	// the read instant, and Receive says nothing.
	ReceiveClock string
	// Stamped counts the replies that carried a kernel receive timestamp
	// of the Replies read.
	Stamped, Replies uint64
	// Hiccups is how late the host hiccup meter's goroutine woke
	// (nanoseconds), sleeping HiccupInterval at a time, during the run:
	// the client machine's own noise; nil without the meter.
	Hiccups        *hdrhistogram.Histogram
	HiccupInterval time.Duration
	// CPU is what the host's CPUs and pacer's own did during the run.
	CPU HostCPU
	// TargetLocal is set when the target shares this host (loopback, a
	// unix socket, one of its addresses): the server and pacer then
	// compete for the same cores. The run's caller sets it.
	TargetLocal bool
	// TargetInProcess is set when the target is served by this very
	// process (pacer's embedded target): the hiccup meter then sees every
	// delay the server's goroutines see. The run's caller sets it.
	TargetInProcess bool
	// ServerProcess is what the server's process did with the CPUs
	// during the measured window, when the target runs on this host in a
	// process of its own that pacer found (openloop.Config.ServerProcess); nil
	// otherwise. Each interval has its own share.
	ServerProcess *ServerProcess
	// Extension is, for a run given a budget to decide in
	// (--decide-within), how it used it; nil otherwise. Its caller sets
	// it.
	Extension *Extension
	// ErrorCodes counts error replies by their first word, plus
	// CodeConnectionLost and "protocol error": the MaxErrorCodes most
	// frequent, the rest under OtherErrors.
	ErrorCodes map[string]uint64
	// FirstError is the full text of the first error reply (at most
	// MaxErrorText bytes, unescaped) or of the first connection failure.
	FirstError string
	// TargetGone is set when every connection was lost and none came back
	// by the end of the timeline (open runs): the server went away.
	TargetGone bool
	// LagLimit is the send-lag p99 above which the generator counts as
	// behind.
	LagLimit time.Duration
	// Interrupted is set when the run was stopped before its end.
	Interrupted bool
	// Clamped counts samples above the histograms' one-hour range.
	Clamped int64
	// Micros is, for closed runs, the latency as redis-benchmark records
	// it: whole microseconds, 10 µs to 3 s, its --precision digits.
	Micros *hdrhistogram.Histogram
	// Pipeline is the closed loop's batch size.
	Pipeline int
	// Commands holds, for a mix, each command's own counts and histograms.
	Commands []CommandResult
	// Nodes holds, against a Redis Cluster, each primary's share.
	Nodes []NodeResult
	// ConnsLost counts connections that died during the run (open loop);
	// Reconnects counts the replacements that came up.
	ConnsLost, Reconnects uint64
	// Blocked is how long the open timeline was held back by full or
	// missing connections.
	Blocked time.Duration
	// HeldSent and HeldUnsent count the requests the target held back:
	// sent, or left unsent, from a moment no connection could take a due
	// request until everything due was queued again (or the run ended).
	// Their lateness is the server's doing, not the generator's (see
	// verdict.Assess).
	HeldSent, HeldUnsent uint64
	// DroppedBacklog counts requests unsent because they were more than
	// MaxBacklog late when their turn came.
	DroppedBacklog uint64
	// Unsolicited counts replies that answered no request; they are never
	// matched to one.
	Unsolicited uint64
	// BytesSent and BytesReceived count what went over the sockets.
	BytesSent, BytesReceived uint64
	// Started is the wall-clock time of T0 (for logs and reports; every
	// duration is measured on the monotonic clock).
	Started time.Time
	// Interval is the length of the intervals; Intervals the series.
	Interval  time.Duration
	Intervals []Interval
	// ClockErrors counts requests whose clock readings were zero or whose
	// response, service or lag time came out negative. Any makes
	// openloop.Run and closedloop.Run return an error wrapping ErrBadClock.
	ClockErrors uint64
	// Warmup is the leading part of the timeline that was sent but not
	// measured (openloop.Config.Warmup); WarmupCounts account for its requests
	// as Counts do for the measured ones. Everything else in the result,
	// Window and the intervals included, covers the measured part only.
	Warmup       time.Duration
	WarmupCounts Counts
	// Stages is the piecewise-linear rate the timeline followed (nil for
	// a constant rate); TargetRate is then the stages' mean rate over the
	// measured window.
	Stages []timeline.Stage
	// Events are what happened to the topology during the run (open
	// runs): their instants and windows as offsets from T0 (see
	// events.Event), the windows judged against EventBound; EventsDropped
	// counts those past events.MaxEvents.
	Events        []events.Event
	EventBound    time.Duration
	EventsDropped int
	// Wait is what the WAITs after writes measured (openloop.Config.Wait);
	// Visibility what the replication probes did (set by the run's
	// caller, package visibility); nil without them.
	Wait       *WaitResult
	Visibility *visibility.Result
}

// Extension is how a run with a budget to reach a verdict in
// (--decide-within) used it: it waited for a quiet host, ran its planned
// duration, and while its verdict was inconclusive went on in steps of
// Every, looking at everything measured after each (Looks), until a look
// decided or the budget ran out. Facts only: verdict.Judge decides from
// them which rule a look applies.
type Extension struct {
	// Planned is the planned duration, Budget the most the whole test
	// could take (quiet wait included), Every the step between looks;
	// PlannedLooks is how many looks the budget held.
	Planned, Budget, Every time.Duration
	PlannedLooks           int
	// Looks is how many looks were taken (the one being judged, for a
	// look's own result); Decided is set when a look ended the run before
	// the budget did, Final when this is the budget's last look.
	Looks          int
	Decided, Final bool
	// QuietWait is how long the run waited for a quiet host before it
	// started, Quiet whether it got one (QuietHiccups the hiccup p99 of
	// the last window it measured).
	QuietWait, QuietHiccups time.Duration
	Quiet                   bool
	// WentOn is why the run went on past its planned duration: the
	// first look's inconclusive reason ("" when it did not).
	WentOn string
	// LookOutcome is what the look that ended the run said (pass or
	// fail; "" when none did). The run's own verdict judges it whole,
	// with the requests sent while that look judged.
	LookOutcome string
	// Retakes is how many times the look that ended the run was taken
	// again, at the ends of the intervals after it, for replies still
	// open at it (Looks' LookAgain).
	Retakes int
	// Hists keeps the intervals' histograms as the sequential rule reads
	// them, from one look to the next, so a look decodes only the
	// intervals closed since the last (nil: each look decodes them all).
	// A look's own; the run's result does not keep it.
	Hists *stats.HistMemo
}

// ServerProcess is a local server's process and what its threads did
// with the CPUs: their CPU time, their wait for a CPU, their time slices
// and context switches (host.ProcUsage).
type ServerProcess struct {
	host.ServerProcess
	Usage host.ProcUsage
}

// add adds o, a later run against the same server, to s.
func (s *ServerProcess) add(o *ServerProcess) *ServerProcess {
	switch {
	case o == nil:
		return s
	case s == nil:
		c := *o
		return &c
	}
	s.Usage.Add(o.Usage)
	return s
}

// HostCPU is what the host's CPUs did during a run.
type HostCPU struct {
	// Available is false where the CPU time could not be read.
	Available bool
	// Seconds is the wall time measured; Busy and Steal the shares of all
	// CPUs' time not idle, and stolen by the hypervisor (0..1); Self
	// pacer's own CPU in cores; CPUs the host's count.
	Seconds, Busy, Steal, Self float64
	CPUs                       int
}

// add combines two runs' CPU figures, weighted by their seconds.
func (c *HostCPU) add(o HostCPU) {
	switch {
	case !o.Available:
		return
	case !c.Available:
		*c = o
		return
	}
	w := c.Seconds + o.Seconds
	if w <= 0 {
		return
	}
	avg := func(a, b float64) float64 { return (a*c.Seconds + b*o.Seconds) / w }
	c.Busy, c.Steal, c.Self = avg(c.Busy, o.Busy), avg(c.Steal, o.Steal), avg(c.Self, o.Self)
	c.Seconds, c.CPUs = w, max(c.CPUs, o.CPUs)
}

// ReceiveClock values.
const (
	ReceiveKernel = "kernel"
	ReceiveRead   = "read"
)

// ReceiveClockOf says what the arrivals of replies were: "kernel" when at
// least 99% of them carried the kernel's receive timestamp (the very
// first replies of a process may come before the kernel turns
// timestamping on), "read" otherwise (none read: "read").
func ReceiveClockOf(stamped, replies uint64) string {
	if replies > 0 && float64(stamped) >= 0.99*float64(replies) {
		return ReceiveKernel
	}
	return ReceiveRead
}

// AchievedRate is completed requests per second over the measured window.
func (r *Result) AchievedRate() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Counts.Completed) / r.Window.Seconds()
}

// PacingStep is one of auto pacing's steps back, during a run, from a
// quantum finer than its default (the precision a tight --slo asks: a
// wake at every due instant for p99<=2ms) to a coarser one, up to the
// default, taken when the host's CPUs had too little idle time to pay for
// the finer one (openloop's stepBack).
type PacingStep struct {
	// At is the offset from T0 where the pacer stepped back.
	At time.Duration
	// From and To are the quanta before and after (0: precise).
	From, To time.Duration
	// HostIdleCPUs is the idle CPU time per wall second, in CPUs, over the
	// window that decided (0.12: an eighth of one CPU idle); HostBusy is
	// the share of all CPUs' time that was busy, 0..1; Self is pacer's
	// own CPU time per wall second, in CPUs.
	HostIdleCPUs, HostBusy, Self float64
	// Window is the length of that window.
	Window time.Duration
}
