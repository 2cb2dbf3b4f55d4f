package scheduler

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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

// Balanced reports whether the counts add up.
func (c Counts) Balanced() bool {
	return c.Scheduled == c.Completed+c.Errors+c.Timeouts+c.Unsent
}

// Verdicts.
const (
	VerdictOK              = "ok"
	VerdictGeneratorBehind = "generator_behind"
	// VerdictTargetLost: the server went away (every connection gone and
	// none back by the end of the timeline) or nothing completed.
	VerdictTargetLost = "target_lost"
)

// ErrConnectionLost is the error code of requests in flight on a connection
// that died.
const ErrConnectionLost = "connection lost"

// Result is what one test measured.
type Result struct {
	Name string
	// Mode is "open" or "closed".
	Mode string
	// TargetRate is the timeline's rate (zero for an unthrottled closed loop).
	TargetRate Rate
	Arrival    string
	Pacing     string
	// Connections used.
	Connections int
	Counts      Counts
	// T0 is the start of the timeline on the Now clock: request i was
	// intended at T0 + Timeline.Offset(i).
	T0 int64
	// Window is the measured window: from the first intended send to the
	// later of the timeline's end and the last reply.
	Window time.Duration
	// Response (reply − intended), Service (reply − written) and Lag
	// (written − intended), in nanoseconds. Response and Service hold the
	// completed requests and, at their age when the run gave up on them,
	// the timeouts; Lag holds every sent request.
	Response, Service, Lag *hdrhistogram.Histogram
	// ErrorCodes counts error replies by their first word, plus
	// ErrConnectionLost.
	ErrorCodes map[string]uint64
	// FirstError is the text of the first error reply or connection failure.
	FirstError string
	// Verdict is VerdictOK or VerdictGeneratorBehind, explained by
	// VerdictReason.
	Verdict       string
	VerdictReason string
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
	// ConnsLost counts connections that died during the run (open loop);
	// Reconnects counts the replacements that came up.
	ConnsLost, Reconnects uint64
	// Blocked is how long the open timeline was held back by full or
	// missing connections.
	Blocked time.Duration
	// DroppedBacklog counts requests unsent because they were more than
	// MaxBacklog late when their turn came.
	DroppedBacklog uint64
	// Unsolicited counts replies that answered no request; they are never
	// matched to one.
	Unsolicited uint64
}

// AchievedRate is completed requests per second over the measured window.
func (r *Result) AchievedRate() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Counts.Completed) / r.Window.Seconds()
}
