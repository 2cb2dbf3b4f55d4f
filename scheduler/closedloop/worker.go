package closedloop

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// A closed loop's worker: one per connection, it claims a batch, writes
// it, waits for its replies and records them, until the run stops; a
// connection that dies is replaced (Reconnect) or ends the run.

type closedWorker struct {
	run       *closedRun
	c         *conn.Conn // written under run.connMu
	dialing   bool       // in Reconnect; guarded by run.connMu
	exited    chan struct{}
	cmds      scheduler.Commands
	buf       []byte
	sent      atomic.Uint64
	completed atomic.Uint64
	errors    atomic.Uint64
	since     atomic.Int64 // send time of the batch in flight, 0 when none
	// stamped counts the replies that carried a kernel receive timestamp
	// of the replied read.
	stamped, replied uint64
	// bytesOut and bytesIn count the bytes of connections replaced by
	// Reconnect.
	bytesOut, bytesIn atomic.Uint64
	// unsentClaimed counts requests claimed whose batch was never written.
	unsentClaimed uint64
	timeouts      uint64
	lost          uint64
	unsolicited   uint64
	codes         map[string]uint64
	firstErr      string
	last          int64
	// sendEnd is where this worker's sending reached, from t0: the later
	// of its last write and the timeline offset just past its last batch
	// (throttled loops only).
	sendEnd   int64
	index     int                      // its connection's index
	node      int                      // index of its cluster node
	redirects uint64                   // cluster redirect replies
	batch     []uint32                 // kinds of the batch in flight
	tally     []scheduler.CommandTally // per command of a mix
	batchOK   []int64                  // ok replies of the batch in flight, per command
	epoch     uint64                   // the moves of cfg.Follow its connection followed
	// recv is the receive lag pending for the replies of one read, which
	// all have it: recorded once, with their count (histo.Pending).
	recv histo.Pending
	_    [64]byte
}

// addReceive notes one reply's receive lag, recording the run before it
// when the lag differs.
func (w *closedWorker) addReceive(lag int64) {
	if v, n := w.recv.Add(lag); n > 0 {
		w.recordReceive(v, n)
	}
}

// flushReceive records the pending receive lag; the batch's end and every
// way out of it call it, so nothing stays pending between batches.
func (w *closedWorker) flushReceive() {
	if v, n := w.recv.Take(); n > 0 {
		w.recordReceive(v, n)
	}
}

func (w *closedWorker) recordReceive(v, n int64) {
	w.run.receive.RecordN(v, n)
	if w.run.nodes != nil {
		w.run.nodes[w.node].receive.RecordN(v, n)
	}
}

func (w *closedWorker) loop() {
	run := w.run
	cfg := &run.cfg
	for !run.stop.Load() {
		k, first := run.claim()
		if k == 0 {
			return
		}
		if run.limiter != nil {
			run.limiter.Take()
		}
		w.buf, w.batch = w.buf[:0], w.batch[:0]
		for range k {
			cmd, kind := w.cmds.Next()
			w.buf = append(w.buf, cmd...)
			w.batch = append(w.batch, kind)
		}
		if cl := cfg.Cluster; cl != nil {
			putTags(w.buf, cl.Slot(w.index))
		}
		// Let the other connections whose replies arrived in the same poll
		// read them first, then write: batches reach the server in bursts,
		// as from redis-benchmark's event loop (reads, then writes on the
		// next turn), and the server finds more clients ready per wake-up.
		// Measured: +3-5% throughput at -P 16 and -P 64.
		runtime.Gosched()
		start := scheduler.Now()
		if run.lag != nil {
			// A batch may leave a little ahead of its place on the
			// timeline (the limiter's slack, or another worker taking the
			// permit of an earlier claim): that is no lag, not a clock
			// error.
			lag := max(0, start-(run.t0+run.timeline.Offset(first)))
			run.lag.Record(lag)
			if scheduler.Timed(run.kinds) {
				for _, kind := range w.batch {
					run.kinds[kind].Lag.Record(lag)
				}
			}
		}
		w.since.Store(start)
		if err := w.c.WriteThenWait(w.buf); err != nil {
			w.since.Store(0)
			w.lostBatch(k, 0, false, start, err)
			return
		}
		w.sent.Add(k)
		if run.lag != nil {
			w.sendEnd = max(w.sendEnd, start-run.t0, run.timeline.Offset(first+k))
		}
		var firstAt int64
		var ok int64
		for j := uint64(0); j < k; {
			r, rt, err := w.c.ReadReply()
			if err != nil {
				w.flushReceive()
				w.lostBatch(k, j, true, start, err)
				return
			}
			if r.Push {
				continue // out of band (RESP3): answers no command
			}
			if rt.Read != 0 && rt.Read < start {
				// Read before this batch was written: it answers none of
				// its commands.
				w.unsolicited++
				continue
			}
			rt = rt.After(start)
			at := rt.Arrival
			w.replied++
			if at != rt.Read {
				w.stamped++
			}
			kind := w.batch[j]
			j++
			if j == 1 {
				firstAt = at
			}
			w.last = at
			if r.Err {
				w.errors.Add(1)
				w.noteError(r.Code())
				if w.tally != nil {
					w.tally[kind].Errors++
					w.tally[kind].NoteError(r.Code())
					run.kinds[kind].Errors.Add(1)
				}
				if cfg.OnErrorReply != nil {
					cfg.OnErrorReply(w.c.ErrorText())
				}
				if cfg.Cluster != nil && redirected(w.c.ErrorText()) {
					w.redirects++
					if cfg.Cluster.OnRedirect != nil {
						cfg.Cluster.OnRedirect(w.c.ErrorText())
					}
					continue
				}
				if !cfg.ContinueOnError {
					if err := cluster.BadRedirect(w.c.ErrorText()); cfg.Cluster != nil && err != nil {
						run.fail(err) // "-MOVED 1 :99999": a protocol error naming the reply
					} else {
						run.fail(&ErrorReply{Text: string(w.c.ErrorText())})
					}
				}
				continue
			}
			ok++
			if r.IsInt && cfg.OnInteger != nil {
				cfg.OnInteger(r.Int)
			}
			w.addReceive(rt.Read - at)
			if scheduler.Timed(run.kinds) {
				run.kinds[kind].Receive.Record(rt.Read - at)
			}
			if w.tally != nil {
				w.tally[kind].Completed++
				w.batchOK[kind]++
				run.kinds[kind].Completed.Add(1)
			}
			if cfg.Latency == PerReply && run.clockOK(start, at, 1) {
				w.record(at-start, 1, kind)
			}
			w.completed.Add(1)
		}
		w.flushReceive()
		w.since.Store(0)
		if cfg.Latency == FirstReply && ok > 0 {
			if run.clockOK(start, firstAt, uint64(ok)) {
				w.recordBatch(firstAt-start, ok)
			} else {
				clear(w.batchOK)
			}
		}
		if cfg.Reconnect != nil && !run.stop.Load() && !w.reconnect(cfg.Reconnect) {
			return
		}
		if cfg.Reconnect == nil && w.moved() && !run.stop.Load() && !w.reconnect(cfg.Redial) {
			return
		}
	}
}

// clockOK checks the latency from start to at of n requests, counting
// them as clock errors when a reading is zero or the time negative.
func (run *closedRun) clockOK(start, at int64, n uint64) bool {
	if at == 0 || start == 0 || at < start {
		run.clockErrors.Add(n)
		return false
	}
	return true
}

// moved reports whether the primary moved since the worker's connection
// was dialed (Config.Follow); the worker then follows it.
func (w *closedWorker) moved() bool {
	f := w.run.cfg.Follow
	if f == nil || w.run.cfg.Redial == nil {
		return false
	}
	if _, epoch := f.Primary(); epoch != w.epoch {
		w.epoch = epoch
		return true
	}
	return false
}

// reconnect replaces the worker's connection after a batch with one of
// dial. It reports false when the worker must end: the run closed its
// connections meanwhile (what dial returned is closed) or dial failed
// (the run fails).
func (w *closedWorker) reconnect(dial func(ctx context.Context) (*conn.Conn, error)) bool {
	run := w.run
	run.connMu.Lock()
	if run.closed {
		run.connMu.Unlock()
		return false
	}
	old := w.c
	w.c, w.dialing = nil, true
	// Last write to w's tallies before the dial: after closeConns, the
	// run reads them without waiting for this worker.
	w.unsolicited += old.Unsolicited()
	w.bytesOut.Add(old.BytesWritten())
	w.bytesIn.Add(old.BytesRead())
	run.connMu.Unlock()
	old.Close()
	c, err := dial(run.ctx)
	run.connMu.Lock()
	defer run.connMu.Unlock()
	if run.closed {
		if err == nil {
			c.Close()
		}
		return false
	}
	w.dialing = false
	if err != nil {
		run.fail(&ConnLostError{Err: err})
		return false
	}
	w.c = c
	return true
}

// record adds n samples of one command kind.
func (w *closedWorker) record(lat, n int64, kind uint32) {
	w.run.latency.RecordN(lat, n)
	w.run.micros.RecordN(lat/1000, n)
	if w.run.nodes != nil {
		w.run.nodes[w.node].latency.RecordN(lat, n)
	}
	if scheduler.Timed(w.run.kinds) {
		w.run.kinds[kind].Response.RecordN(lat, n)
	}
}

// recordBatch adds one latency for each of the batch's ok replies: ok in
// total, batchOK per command of a mix.
func (w *closedWorker) recordBatch(lat, ok int64) {
	w.run.latency.RecordN(lat, ok)
	w.run.micros.RecordN(lat/1000, ok)
	if w.run.nodes != nil {
		w.run.nodes[w.node].latency.RecordN(lat, ok)
	}
	for kind, n := range w.batchOK {
		if n > 0 {
			if scheduler.Timed(w.run.kinds) {
				w.run.kinds[kind].Response.RecordN(lat, n)
			}
			w.batchOK[kind] = 0
		}
	}
}

// lostBatch accounts for a batch of k written at start whose write
// (written=false) or reply j failed. Requests never written stay unsent.
// Unanswered ones are timeouts, recorded at their age, when the run closed
// the connection itself (an interrupt or the end of Duration's drain), and
// errors of kind "connection lost" otherwise, which fails the run.
func (w *closedWorker) lostBatch(k, j uint64, written bool, start int64, err error) {
	closedByUs := w.run.stop.Load() && w.c.Err() == nil
	clear(w.batchOK)
	if w.tally != nil {
		for _, kind := range w.batch[j:k] {
			switch {
			case !written:
				w.tally[kind].Unsent++
			case closedByUs:
				w.tally[kind].Timeouts++
			default:
				w.tally[kind].Lost++
			}
		}
	}
	if !written {
		w.unsentClaimed += k
		if !closedByUs {
			w.run.fail(&ConnLostError{Err: err})
		}
		return
	}
	rest := k - j
	if closedByUs {
		w.timeouts += rest
		// Their age so far, so a server that stops answering never
		// looks fast.
		if age := scheduler.Now(); w.run.clockOK(start, age, rest) {
			for _, kind := range w.batch[j:k] {
				w.record(age-start, 1, kind)
			}
		}
		return
	}
	w.lost += rest
	w.run.fail(&ConnLostError{Err: err})
}

func (w *closedWorker) noteError(code []byte) {
	if w.codes == nil {
		w.codes = map[string]uint64{}
	}
	scheduler.AddCode(w.codes, code, 1)
	if w.firstErr == "" {
		w.firstErr = scheduler.ErrorText(w.c.ErrorText())
	}
}
