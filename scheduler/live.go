package scheduler

import (
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// Progress is a moment's view of a running test.
type Progress struct {
	// Elapsed since the test's start.
	Elapsed time.Duration
	// Sent, Completed and Errors count requests so far.
	Sent, Completed, Errors uint64
	// InFlight counts requests written and not yet answered.
	InFlight int
}

// Live lets another goroutine watch a running test, for progress lines.
// All methods are safe to call concurrently with the run.
type Live struct {
	start  int64
	counts func() (sent, completed, errors uint64, inflight int)
	// Latency is the headline latency recorder: response time in open
	// mode, latency from the send in closed mode (nanoseconds).
	Latency *histo.Recorder
	// Micros is the closed loop's redis-benchmark-compatible histogram
	// (whole microseconds, 10 µs to 3 s); nil in open mode.
	Micros *histo.Recorder
	done   atomic.Bool
}

// Progress returns the current counts.
func (l *Live) Progress() Progress {
	s, c, e, f := l.counts()
	return Progress{Elapsed: time.Duration(nanotime() - l.start), Sent: s, Completed: c, Errors: e, InFlight: f}
}

// Done reports whether the test has finished.
func (l *Live) Done() bool { return l.done.Load() }
