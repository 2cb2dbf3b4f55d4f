package openloop

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

type openRun struct {
	cfg                             Config
	response, service, lag, receive *histo.Recorder
	// host measures the client machine during the run; live is the view
	// handed to OnStart.
	host        *scheduler.HostWatch
	live        *scheduler.Live
	kinds       []scheduler.CommandStats // per command of a mix; nil for one
	lanes       []*lane                  // pacer-owned (observers: shown)
	view        atomic.Pointer[[]*lane]
	tally       tally // requests of connections already retired
	redialCtx   context.Context
	stopRedials context.CancelFunc
	dialing     chan struct{} // a token per redial in progress (MaxConcurrentRedials)
	connsLost   atomic.Uint64
	reconnects  atomic.Uint64
	clockErrors atomic.Uint64
	// accounted mirrors, for observers, what retired connections added to
	// tally (requests lost with a connection, timed out, left unwritten)
	// and the requests dropped for being too late.
	accounted struct{ lost, timeouts, unsent, dropped atomic.Uint64 }
	series    *scheduler.Series // set when the timeline starts
	// cut is the timeline offset a look ended the run at (0: none); the
	// pacer ends the timeline there at its next wake.
	cut atomic.Int64
	cl  *clusterRun // nil without cfg.Cluster
	// span is the timeline's length (its end offset), outcomes what went
	// bad in it, set when it starts (see events.go); epoch is the
	// moves of cfg.Follow the lanes followed (pacer-owned).
	span     int64
	outcomes atomic.Pointer[events.Tally]
	events   *events.Log // nil without cfg.Events
	epoch    uint64
	// movedAside counts the lanes left with a former primary: they are
	// no connections of the run's own (pacer-owned).
	movedAside int
	// solo are the nodes of a run with replicas or a primary that moves,
	// not a cluster's (see nodes.go; pacer-owned).
	solo []soloNode
	// startConns is how many connections the run started with.
	startConns int
	// nodeRecs are the node recorders for observers (publishNodes).
	nodeRecs atomic.Pointer[[]nodeView]
	// wait is the WAITs after writes (nil without cfg.Wait).
	wait *waitRun
	// liveTL is scheduledBy's own timeline (see forker), and liveWarm
	// its count of the warmup's requests (-1: not counted yet).
	liveTLMu sync.Mutex
	liveTL   timeline.Timeline
	liveWarm int64
	// liveDone is set once the run closed liveTL; liveLast is the last
	// count, what later calls return.
	liveDone bool
	liveLast uint64
	// warmEnd is the clock time the measured window starts: requests
	// intended before it are the warmup's (0: no warmup). Set when the
	// timeline starts, before anything is queued.
	warmEnd int64
	// handoffMu orders redials' deliveries with finish: once closed is
	// set, a redial closes the connection it got instead of delivering it.
	handoffMu sync.Mutex
	closed    bool
	dialErr   error // the first failed redial
	// joinLog holds the cluster nodes that joined, for observers (scheduler.Live).
	joinMu  sync.Mutex
	joinLog []scheduler.NodeJoin
}

// joinsSince returns the nodes that joined, from the from-th on.
func (run *openRun) joinsSince(from int) []scheduler.NodeJoin {
	run.joinMu.Lock()
	defer run.joinMu.Unlock()
	if from >= len(run.joinLog) {
		return nil
	}
	return append([]scheduler.NodeJoin(nil), run.joinLog[max(from, 0):]...)
}

// lane is one of the run's connections: the live conn (nil while one is
// being dialed) and the reply handler that outlives conns.
type lane struct {
	c       *conn.Conn
	h       *replies
	next    chan redialed // a redial delivers here
	dialing bool          // pacer-owned
	// backoff is the wait before the lane's next redial; completedAt is
	// h.completed when c was installed (both pacer-owned).
	backoff     time.Duration
	completedAt uint64
	sent        atomic.Uint64 // measured requests written by retired conns of this lane
	warmSent    atomic.Uint64 // warmup requests written by retired conns of this lane
	// warmQueued counts the warmup requests queued on the current conn:
	// its first warmQueued entries, as a conn's FIFO is in timeline order.
	warmQueued atomic.Uint64
	bytesOut   atomic.Uint64 // bytes written by retired conns of this lane
	bytesIn    atomic.Uint64 // bytes read by retired conns of this lane
	live       atomic.Pointer[conn.Conn]
	// Cluster runs: the lane's node and its address (immutable); extra
	// counts the entries queued on the current conn that are no first
	// send (resends, ASKING); left is what its retired conns left (pacer,
	// then finish).
	node  int
	addr  string
	extra atomic.Uint64
	// group is the lane's connection group (Config.Groups).
	group int
	// Following a primary that moves (Config.Follow): epoch is the
	// move its connection was dialed after; leaving marks a lane whose
	// connection stays with the former primary, sending nothing more,
	// until its requests in flight have ended; lost that its connection
	// died and the next one is a reconnect (all pacer-owned).
	epoch   uint64
	replica bool // reads go to it (Topology.Replicas), it is never moved
	leaving bool
	closing bool        // a leaving lane's connection is being closed
	aside   atomic.Bool // leaving, for observers
	lost    bool
	left    struct{ errors, timeouts, unsent uint64 }
	// sw, in a run of steps, is the lane's handler for every connection it
	// ever holds: it hands replies to the current step's h.
	sw *stepHandler
	// carried is a connection that served earlier steps, and base its
	// counters when this step began (immutable during the step).
	carried *conn.Conn
	base    connCounts
}

// connCounts are a connection's cumulative counters.
type connCounts struct{ written, bytesOut, bytesIn, unsolicited uint64 }

// counts returns c's counters within this run: since the run began for a
// connection carried over from an earlier step.
func (s *lane) counts(c *conn.Conn) connCounts {
	n := connCounts{c.Written(), c.BytesWritten(), c.BytesRead(), c.Unsolicited()}
	if c == s.carried {
		b := s.base
		n = connCounts{n.written - min(n.written, b.written), n.bytesOut - min(n.bytesOut, b.bytesOut),
			n.bytesIn - min(n.bytesIn, b.bytesIn), n.unsolicited - min(n.unsolicited, b.unsolicited)}
	}
	return n
}

// handler is what the lane's connections are started with.
func (s *lane) handler() conn.Handler {
	if s.sw != nil {
		return s.sw
	}
	return s.h
}

// tally accumulates what retired connections leave: the pacer adds to it
// when it replaces a dead connection, finish when it closes the rest.
type tally struct {
	errors, timeouts, unsent, sent, unsolicited uint64
	codes                                       map[string]uint64
	firstErr                                    string
	// warm is what retired connections left of the warmup's requests.
	warm struct{ errors, timeouts, unsent uint64 }
}

// splitWritten divides the written count of a conn that queued warmQueued
// warmup requests (its first entries) into warmup and measured writes.
func splitWritten(written, warmQueued uint64) (warm, measured uint64) {
	warm = min(written, warmQueued)
	return warm, written - warm
}

// totals reads the run's cumulative counts and bytes, for observers.
// Retired connections' counts are read before the live ones: a connection
// retiring in between is then missed once, never counted twice.
// Scheduled is left 0 (see scheduledBy).
func (run *openRun) totals() scheduler.Totals {
	var t scheduler.Totals
	for _, s := range run.shown() {
		t.Sent += s.sent.Load()
		t.BytesSent += s.bytesOut.Load()
		t.BytesReceived += s.bytesIn.Load()
		if c := s.conn(); c != nil {
			n := s.counts(c)
			_, measured := splitWritten(firstWrites(n.written, s.extra.Load()), s.warmQueued.Load())
			t.Sent += measured
			t.BytesSent += n.bytesOut
			t.BytesReceived += n.bytesIn
		}
		t.Completed += s.h.completed.Load()
		t.ReplyErrors += s.h.errors.Load()
	}
	if run.cl != nil {
		t.ReplyErrors += run.cl.errs.Load()
	}
	t.ConnErrors = run.accounted.lost.Load()
	t.Errors = t.ReplyErrors + t.ConnErrors
	t.Timeouts = run.accounted.timeouts.Load()
	t.Unsent = run.accounted.unsent.Load() + run.accounted.dropped.Load()
	return t
}

// scheduledBy counts the measured requests the timeline intends before
// offset off (within the run's duration and request bound). For observers:
// it counts on its own fork of the timeline, never the pacer's.
func (run *openRun) scheduledBy(off int64) uint64 {
	run.liveTLMu.Lock()
	defer run.liveTLMu.Unlock()
	if run.liveDone {
		return run.liveLast
	}
	if run.liveTL == nil {
		run.liveTL, run.liveWarm = timeline.Fork(run.cfg.Timeline), -1
	}
	cfg := run.cfg
	cfg.Timeline = run.liveTL
	end, limit := int64(math.MaxInt64), uint64(math.MaxUint64)
	if cfg.Duration > 0 {
		end = int64(cfg.Duration)
	}
	if cfg.Requests > 0 {
		limit = timeline.RequestLimit(cfg.Timeline, cfg.Requests)
	}
	// The warmup's count first, once: later calls then read forward only
	// (a trace's cursor walks its file; going back reopens it).
	if run.liveWarm < 0 {
		run.liveWarm = 0
		if cfg.Warmup > 0 {
			run.liveWarm = int64(timeline.CountFrom(cfg.Timeline, 0, min(int64(cfg.Warmup), end), limit))
		}
	}
	n := timeline.CountFrom(cfg.Timeline, 0, min(off, end), limit)
	run.liveLast = n - min(n, uint64(run.liveWarm))
	return run.liveLast
}

// closeLive releases scheduledBy's timeline; later calls return final,
// the run's measured scheduled count.
func (run *openRun) closeLive(final uint64) {
	run.liveTLMu.Lock()
	defer run.liveTLMu.Unlock()
	run.liveDone, run.liveLast = true, final
	if run.liveTL != nil {
		timeline.Close(run.liveTL)
		run.liveTL = nil
	}
}

// liveCounts are the progress line's counts: everything on the wire,
// warmup included.
func (run *openRun) liveCounts() (sent, completed, errs uint64, inflight int) {
	for _, s := range run.shown() {
		sent += s.sent.Load() + s.warmSent.Load()
		if c := s.conn(); c != nil {
			sent += firstWrites(s.counts(c).written, s.extra.Load())
		}
		completed += s.h.completed.Load() + s.h.warmCompleted.Load()
		errs += s.h.errors.Load() + s.h.warmErrors.Load()
	}
	return sent, completed, errs, int(sent - min(sent, completed+errs))
}

// conn returns the lane's connection for observers on other goroutines.
func (s *lane) conn() *conn.Conn { return s.live.Load() }

// set installs c (nil: none) for the pacer and for observers.
func (s *lane) set(c *conn.Conn) {
	s.c = c
	s.live.Store(c)
}

func (run *openRun) oldest() int64 {
	var o int64
	for _, s := range run.shown() {
		if c := s.conn(); c != nil {
			if t, ok := c.OldestPending(); ok && (o == 0 || t < o) {
				o = t
			}
		}
	}
	return o
}

// account adds what a closed connection left to t: unanswered requests are
// errors ("connection lost", or "protocol error"), or timeouts when the
// connection expired or the run gave up on them at end; unwritten ones are
// unsent. It also counts what the connection wrote.
func (run *openRun) account(c *conn.Conn, s *lane, end int64, t *tally) {
	h := s.h
	err := c.Err()
	code := scheduler.CodeConnectionLost
	timedOut := err == nil || errors.Is(err, conn.ErrTimeout)
	if errors.Is(err, conn.ErrProtocol) {
		code = scheduler.CodeProtocolError
	}
	if err != nil && !timedOut && t.firstErr == "" {
		t.firstErr = err.Error()
	}
	n := s.counts(c)
	t.unsolicited += n.unsolicited
	run.tallyLeft(c, end)
	errors0, timeouts0, unsent0 := t.errors, t.timeouts, t.unsent
	codeBytes := []byte(code)
	c.Unanswered(func(e *conn.Entry) {
		if e.Kind&noRequest != 0 {
			return // an ASKING or a WAIT
		}
		if run.warm(e) {
			if timedOut {
				t.warm.timeouts++
			} else {
				t.warm.errors++
			}
			return
		}
		ks, kc := run.kindOf(h, e)
		good := run.clockOK(e, end)
		if good && e.Kind&resendFlag == 0 {
			run.recordLag(e, ks)
		}
		if !timedOut {
			t.errors++
			t.codes[code]++
			switch {
			case kc == nil:
			case code == scheduler.CodeConnectionLost:
				kc.Lost++
			default:
				kc.Errors++
				kc.NoteError(codeBytes)
			}
			return
		}
		// Its age so far, so a server that stops answering never looks fast.
		t.timeouts++
		if good {
			run.recordAt(e, end, ks)
		}
		if kc != nil {
			kc.Timeouts++
		}
	})
	// A cluster conn's resends left unwritten were sent once: they are
	// errors; its ASKINGs are no requests.
	written, unwritten := n.written, uint64(c.Unwritten())
	if run.cl != nil || s.extra.Load() > 0 {
		var extraUnsent uint64
		c.Unsent(func(e *conn.Entry) {
			if e.Kind&extraFlags == 0 {
				return
			}
			extraUnsent++
			if e.Kind&resendFlag == 0 {
				return
			}
			switch {
			case run.warm(e):
				t.warm.errors++
			default:
				t.errors++
				t.codes[codeResendUnsent]++
				if _, kc := run.kindOf(h, e); kc != nil {
					kc.Errors++
					kc.NoteError([]byte(codeResendUnsent))
				}
			}
		})
		written = firstWrites(written, s.extra.Load()-min(s.extra.Load(), extraUnsent))
		unwritten -= extraUnsent
	}
	run.accounted.lost.Add(t.errors - errors0)
	run.accounted.timeouts.Add(t.timeouts - timeouts0)
	n.written = written
	run.moveCounts(c, s, n, t)
	unsent := unwritten
	if run.warmEnd != 0 {
		warmUnsent := uint64(0)
		c.Unsent(func(e *conn.Entry) {
			if run.warm(e) && e.Kind&extraFlags == 0 {
				warmUnsent++
			}
		})
		t.warm.unsent += warmUnsent
		unsent -= warmUnsent
	}
	t.unsent += unsent
	run.accounted.unsent.Add(unsent)
	if run.kinds != nil {
		c.Unsent(func(e *conn.Entry) {
			if int(e.Kind) < len(h.kinds) && !run.warm(e) { // flagged kinds are out of range
				h.kinds[e.Kind].Unsent++
			}
		})
	}
	s.left.errors += t.errors - errors0
	s.left.timeouts += t.timeouts - timeouts0
	s.left.unsent += t.unsent - unsent0
	s.extra.Store(0)
}

// firstWrites is the written count of a conn without its extra entries
// (cluster resends and ASKINGs), clamped at zero for observers that read
// the two counts at different moments.
func firstWrites(written, extra uint64) uint64 { return written - min(written, extra) }

// moveCounts adds what connection c of lane s wrote and read (n, split
// into the warmup's and the measured writes) to t and to the lane's
// retired counts. Observers (liveCounts) count a lane's live connection's
// writes and the retired ones' in s.sent: they move over in one step, so
// the last progress line neither loses nor doubles them.
func (run *openRun) moveCounts(c *conn.Conn, s *lane, n connCounts, t *tally) {
	warmSent, sent := splitWritten(n.written, s.warmQueued.Load())
	t.sent += sent
	s.live.CompareAndSwap(c, nil)
	s.sent.Add(sent)
	s.warmSent.Add(warmSent)
	s.warmQueued.Store(0) // the next conn starts its own count
	s.bytesOut.Add(n.bytesOut)
	s.bytesIn.Add(n.bytesIn)
}
