package openloop

import (
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// WAIT after writes (memtier's --wait-ratio, measured from the intended
// write): an open run with Wait set queues WAIT numreplicas timeout right
// after every write on the write's own connection, where it waits for the
// replicas to acknowledge that connection's writes so far, and records its
// reply's arrival less the write's intended time. WAITs are no requests:
// they count in scheduler.Result.Wait only, never in the test's counts; the
// connection's later requests wait behind them, as an application's
// would.

// waitFlag marks a WAIT entry; it carries its write's kind.
const waitFlag = uint32(1) << 29

// Flag sets of entries: those that are no first send of a request
// (extraFlags) and those that are no request at all (noRequest).
const (
	extraFlags = askingFlag | resendFlag | waitFlag
	noRequest  = askingFlag | waitFlag
)

// waitRun is an open run's WAIT state.
type waitRun struct {
	cfg                                 scheduler.Wait
	cmd                                 []byte
	latency                             *histo.Recorder
	queued, acked, short, errs, skipped atomic.Uint64
	lost                                atomic.Uint64
}

func newWaitRun(w *scheduler.Wait) *waitRun {
	if w == nil {
		return nil
	}
	return &waitRun{cfg: *w, latency: histo.NewRecorder(),
		cmd: conn.AppendCommand(nil, "WAIT", strconv.Itoa(w.Replicas), strconv.FormatInt(w.Timeout.Milliseconds(), 10))}
}

// validateWait checks Wait.
func (c *Config) validateWait() error {
	switch w := c.Wait; {
	case w == nil:
		return nil
	case c.Cluster != nil:
		return errors.New("open run: WAIT after writes is for a primary with replicas, not a cluster")
	case w.Replicas < 1 || w.Timeout < 0:
		return errors.New("open run: WAIT wants at least one replica and a timeout that is not negative")
	}
	return nil
}

// queueWait queues a WAIT after the write of kind just queued on lane s
// at intended, when the run waits and kind writes.
func (p *pacer) queueWait(s *lane, kind uint32, intended int64) {
	w := p.run.wait
	if w == nil || p.run.classOf(kind) != 0 || intended < p.run.warmEnd {
		return
	}
	if s.c.Free() == 0 {
		w.skipped.Add(1)
		return
	}
	s.c.Queue(w.cmd, intended, waitFlag|kind&kindMask)
	s.extra.Add(1)
	w.queued.Add(1)
}

// waitReply records a WAIT's reply (on the reader's goroutine).
func (h *replies) waitReply(e *conn.Entry, r conn.Reply, t conn.Times) {
	w := h.run.wait
	switch {
	case r.Err:
		w.errs.Add(1)
	case r.IsInt && r.Int < int64(w.cfg.Replicas):
		w.short.Add(1)
	default:
		w.acked.Add(1)
	}
	if t.Arrival >= e.Intended && e.Intended != 0 {
		w.latency.Record(t.Arrival - e.Intended)
	}
	if t.Last {
		h.ReadEnded()
	}
}

// result is the WAITs' result at the end of the run: every WAIT queued
// was answered, lost or left unsent.
func (w *waitRun) result() *scheduler.WaitResult {
	if w == nil {
		return nil
	}
	r := &scheduler.WaitResult{Wait: w.cfg, Acked: w.acked.Load(), Short: w.short.Load(), Errors: w.errs.Load(),
		Skipped: w.skipped.Load(), Latency: w.latency.Snapshot()}
	r.Sent = w.queued.Load()
	r.Lost = r.Sent - min(r.Sent, r.Acked+r.Short+r.Errors)
	return r
}
