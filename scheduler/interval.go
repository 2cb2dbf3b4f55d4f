package scheduler

import (
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
)

// DefaultInterval is the length of an interval when the config leaves it 0.
const DefaultInterval = time.Second

// Interval is one slice of a test: interval k covers [T0+k·D, T0+(k+1)·D)
// on the test's clock, D being the configured interval (after a warmup W,
// [T0+W+k·D, T0+W+(k+1)·D): Start is always from T0); the last one ends
// with the measured window, so it may be shorter, and it holds what the
// end of the run accounted for (timeouts, unsent). A latency belongs to the
// interval in which it was recorded (its reply), as in HdrHistogram
// interval logs. Counts.Scheduled counts the requests intended within the
// interval, Sent those written within it. A test's intervals add up to the
// test exactly: counts sum to its counts, histograms merge to its
// histograms.
type Interval struct {
	Start, Duration time.Duration
	Counts          Counts
	// Bytes written to and read from the sockets (the test's total only;
	// zero in a command's intervals).
	BytesSent, BytesReceived uint64
	// Response, Service and Lag are the interval's histograms (Lag is empty
	// in closed mode); Receive its receive lag and Hiccup the host's
	// hiccups in it (empty without the meter).
	Response, Service, Lag, Receive, Hiccup histo.Packed
	// OldestInflight is the age of the oldest unanswered request at the
	// interval's end, from its intended time (open) or its send (closed):
	// a stall shows in the interval where it happens, while no reply
	// lands there. The largest age within the interval is the larger of
	// it and the interval's largest response time.
	OldestInflight time.Duration
	// InFlight is the requests written and not yet answered at the
	// interval's end (a queue that grows through a step shows here).
	InFlight uint64
	// ServerProcess is what a local server's process did with the CPUs
	// in the interval (its wait for a CPU, its CPU time, …), read at the
	// interval's end; nil when it is not watched.
	ServerProcess *host.ProcUsage
}

// Totals are a running test's cumulative counts, for live progress and
// metrics. Counts.Scheduled is what was intended so far.
type Totals struct {
	Counts
	// ReplyErrors are error replies; ConnErrors requests lost with their
	// connection (Errors = ReplyErrors + ConnErrors).
	ReplyErrors, ConnErrors  uint64
	BytesSent, BytesReceived uint64
}
