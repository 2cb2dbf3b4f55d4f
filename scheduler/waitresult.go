package scheduler

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// The WAIT after writes (memtier's --wait-ratio) an open run may send,
// and what it measured: a part of a Result, added up by Merge.

// Wait configures the WAIT after writes.
type Wait struct {
	// Replicas is how many must acknowledge; Timeout how long the server
	// waits for them (0: for ever, WAIT's own meaning).
	Replicas int
	Timeout  time.Duration
}

// WaitResult is what the WAITs after writes measured: how many were sent,
// how many the replicas acknowledged in time (Acked: at least Replicas),
// how many returned fewer (Short: the timeout ran out), error replies,
// those lost with their connection or left unsent at the end, writes
// that got no WAIT (their connection's FIFO had no room for it), and
// the latency from each write's intended time to its WAIT's reply (ns).
type WaitResult struct {
	Wait
	Sent, Acked, Short, Errors, Lost, Skipped uint64
	Latency                                   *hdrhistogram.Histogram
}

// merge adds o, a later run's WAITs, to r (either may be nil; r is
// returned, its own).
func (r *WaitResult) merge(o *WaitResult) *WaitResult {
	switch {
	case o == nil:
		return r
	case r == nil:
		return o.clone()
	}
	r.Sent += o.Sent
	r.Acked += o.Acked
	r.Short += o.Short
	r.Errors += o.Errors
	r.Lost += o.Lost
	r.Skipped += o.Skipped
	r.Latency, _ = histo.Add(r.Latency, o.Latency)
	return r
}

func (r *WaitResult) clone() *WaitResult {
	if r == nil {
		return nil
	}
	c := *r
	c.Latency = histo.Copy(r.Latency)
	return &c
}
