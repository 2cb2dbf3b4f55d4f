package openloop

import (
	"sync/atomic"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// An open run's replies: each connection's handler matches a reply to its
// request and records response, service, send lag and receive lag (or the
// warmup's own accounting), per command too.

// replies is the Handler of one lane: it runs on the reader
// goroutine of the lane's current connection and records into the shared
// lock-free recorders.
type replies struct {
	run       *openRun
	completed atomic.Uint64
	errors    atomic.Uint64
	kinds     []scheduler.CommandTally // per command of a mix; read after the reader exits
	last      int64                    // arrival of the latest reply; read after the reader exits
	codes     map[string]uint64        // error replies by code, bounded; read after the reader exits
	firstErr  string

	// warmCompleted and warmErrors count the replies to warmup requests,
	// which are not measured.
	warmCompleted, warmErrors atomic.Uint64

	// Cluster runs: the lane's index and node, the node's response-time
	// recorder, the sequence number of the next reply on the current
	// connection, and the redirects seen.
	cl          *clusterRun
	index, node int
	// lane is the lane whose connections it reads (immutable).
	lane    *lane
	nodeRec *scheduler.NodeRecorders
	// stamped counts the replies that carried a kernel receive timestamp
	// of the replied read; read after the reader exits.
	stamped, replied    uint64
	seq                 uint64
	moved, ask, retries atomic.Uint64
	// recv holds the receive lag of the replies handled since the last
	// flush (histo.Pending): every reply of one read has the same
	// (conn.Times.Last), so it is recorded once per read with its count;
	// touched by the reader only. svc holds their service time the same
	// way: the replies of one read to requests of one flush share it (at
	// 1M/s a dozen in a row on a connection).
	recv, svc histo.Pending
	_         [64]byte // keep neighbouring handlers' counters apart
}

func (h *replies) Reply(e *conn.Entry, r conn.Reply, t conn.Times) {
	at := t.Arrival
	run := h.run
	h.replied++
	if at != t.Read {
		h.stamped++
	}
	if e.Kind&waitFlag != 0 {
		h.waitReply(e, r, t)
		return
	}
	if h.cl != nil {
		seq := h.seq
		h.seq++
		if e.Kind&askingFlag != 0 || h.cl.intercept(h, e, r, seq) {
			return // ASKING's reply, or a redirect the pacer resends
		}
	}
	if run.warm(e) {
		h.warmReply(r)
		return
	}
	h.last = at
	ks, kc := run.kindOf(h, e)
	// A reply read before its request was written never gets here: the
	// connection skips it as unsolicited (conn.Conn.Unsolicited).
	good := run.clockOK(e, at)
	if good && e.Kind&resendFlag == 0 {
		run.recordLag(e, ks)
	}
	if good && !r.Err {
		run.response.Record(at - e.Intended)
		h.addService(at - e.Written)
		if ks != nil && ks.Response != nil {
			ks.Response.Record(at - e.Intended)
			ks.Service.Record(at - e.Written)
		}
		run.tallyDone(e, at-e.Intended)
		h.addReceive(t.Read-at, kc)
		if h.nodeRec != nil {
			nh := h.nodeRec.Get()
			nh.Response.Record(at - e.Intended)
			nh.Service.Record(at - e.Written)
		}
	}
	if t.Last {
		// The read's replies are all handled: their receive lag is
		// recorded before this one counts, error or not, so a count seen
		// at the end of a step or run has its lag recorded.
		h.ReadEnded()
	}
	if r.Err {
		h.errors.Add(1)
		h.replyError(e, r, at-e.Intended)
		scheduler.AddCode(h.codes, r.Code(), 1)
		if h.firstErr == "" {
			h.firstErr = scheduler.ErrorText(r.Text)
		}
		if run.cfg.OnErrorReply != nil {
			run.cfg.OnErrorReply(r.Text)
		}
		if kc != nil {
			kc.Errors++
			kc.NoteError(r.Code())
			ks.Errors.Add(1)
		}
		return
	}
	if kc != nil {
		kc.Completed++
		ks.Completed.Add(1)
	}
	if r.IsInt && run.cfg.OnInteger != nil {
		run.cfg.OnInteger(r.Int)
	}
	h.completed.Add(1)
}

// addReceive notes a reply's receive lag. A lag other than the pending
// one (a reply whose arrival After raised) records the pending one first,
// with the per-command counts that belong to it.
func (h *replies) addReceive(lag int64, kc *scheduler.CommandTally) {
	if prev, n := h.recv.Add(lag); n > 0 {
		h.recordReceive(prev, n)
	}
	if kc != nil {
		kc.Recv++
	}
}

// recordReceive records n replies' receive lag, and each command's share
// of them (scheduler.CommandTally.Recv).
func (h *replies) recordReceive(lag, n int64) {
	run := h.run
	run.receive.RecordN(lag, n)
	for k := range h.kinds { // none in a single-command test
		if c := h.kinds[k].Recv; c > 0 {
			if r := run.kinds[k].Receive; r != nil {
				r.RecordN(lag, c)
			}
			h.kinds[k].Recv = 0
		}
	}
	if h.nodeRec != nil {
		h.nodeRec.Get().Receive.RecordN(lag, n)
	}
}

// addService notes a reply's service time, recording the run before it
// when the time differs.
func (h *replies) addService(v int64) {
	if prev, n := h.svc.Add(v); n > 0 {
		h.run.service.RecordN(prev, n)
	}
}

func (h *replies) flushService() {
	if v, n := h.svc.Take(); n > 0 {
		h.run.service.RecordN(v, n)
	}
}

// ReadEnded records the pending receive lag and service time
// (conn.ReadEnder).
func (h *replies) ReadEnded() {
	h.flushService()
	if lag, n := h.recv.Take(); n > 0 {
		h.recordReceive(lag, n)
	}
}

// warmReply counts the reply to a warmup request: nothing else of it is
// kept, but error replies still reach OnErrorReply.
func (h *replies) warmReply(r conn.Reply) {
	if !r.Err {
		h.warmCompleted.Add(1)
		return
	}
	h.warmErrors.Add(1)
	if h.run.cfg.OnErrorReply != nil {
		h.run.cfg.OnErrorReply(r.Text)
	}
}

// warm reports whether e is a warmup request: intended before the
// measured window.
func (run *openRun) warm(e *conn.Entry) bool { return e.Intended < run.warmEnd }

// clockOK checks e's readings as of t (its reply, or when the run gave up
// on it): a zero reading or a negative lag, response or service time is
// counted in clockErrors and not recorded, and the run fails.
func (run *openRun) clockOK(e *conn.Entry, t int64) bool {
	if t == 0 || e.Written == 0 || e.Intended == 0 || e.Written < e.Intended || t < e.Written {
		run.clockErrors.Add(1)
		return false
	}
	return true
}

// kindOf returns the per-command stats and h's tally for e's command, or
// nils in a single-command test.
func (run *openRun) kindOf(h *replies, e *conn.Entry) (*scheduler.CommandStats, *scheduler.CommandTally) {
	k := e.Kind & kindMask
	if run.kinds == nil || int(k) >= len(run.kinds) {
		return nil, nil
	}
	return &run.kinds[k], &h.kinds[k]
}

// recordLag adds e's send lag to the total and to its command's stats.
func (run *openRun) recordLag(e *conn.Entry, ks *scheduler.CommandStats) {
	run.lag.Record(e.Written - e.Intended)
	if ks != nil && ks.Lag != nil {
		ks.Lag.Record(e.Written - e.Intended)
	}
}

// recordAt adds e's response and service times as of t (its reply, or the
// moment it was given up on) to the total and to its command's stats.
func (run *openRun) recordAt(e *conn.Entry, t int64, ks *scheduler.CommandStats) {
	run.response.Record(t - e.Intended)
	run.service.Record(t - e.Written)
	if ks != nil && ks.Response != nil {
		ks.Response.Record(t - e.Intended)
		ks.Service.Record(t - e.Written)
	}
}
