package scheduler

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
)

// replies is the Handler of one connection slot: it runs on the reader
// goroutine of the slot's current connection and records into the shared
// lock-free recorders.
type replies struct {
	run       *openRun
	completed atomic.Uint64
	errors    atomic.Uint64
	early     atomic.Uint64     // replies read before their request was written
	kinds     []kindCount       // per command of a mix; read after the reader exits
	last      int64             // arrival of the latest reply; read after the reader exits
	codes     map[string]uint64 // error replies by code, bounded; read after the reader exits
	firstErr  string

	// warmCompleted and warmErrors count the replies to warmup requests,
	// which are not measured.
	warmCompleted, warmErrors atomic.Uint64

	// Cluster runs: the slot's index and node, the node's response-time
	// recorder, the sequence number of the next reply on the current
	// connection, and the redirects seen.
	cl                 *clusterRun
	index, node        int
	nodeResp, nodeServ *histo.Recorder
	nodeRecv           *histo.Recorder
	// stamped counts the replies that carried a kernel receive timestamp
	// of the replied read; read after the reader exits.
	stamped, replied    uint64
	seq                 uint64
	moved, ask, retries atomic.Uint64
	_                   [64]byte // keep neighbouring handlers' counters apart
}

func (h *replies) Reply(e *conn.Entry, r conn.Reply, t conn.Times) {
	at := t.Arrival
	run := h.run
	h.replied++
	if at != t.Read {
		h.stamped++
	}
	if h.cl != nil {
		seq := h.seq
		h.seq++
		if e.Kind&askingFlag != 0 || h.cl.intercept(h, e, r, seq) {
			return // ASKING's reply, or a redirect the pacer resends
		}
	}
	if run.warm(e) {
		h.warmReply(e, r, at)
		return
	}
	h.last = at
	ks, kc := run.kindOf(h, e)
	good := true
	if at != 0 && e.Written != 0 && at < e.Written {
		// Read before its request was written (the write's clock is read
		// before the write begins): it answers no request, e.g. a
		// refusal sent on accept. It is counted as unsolicited and, as
		// the connection matched it, still ends that request; its times
		// mean nothing and are not recorded.
		h.early.Add(1)
		good = false
	} else {
		good = run.clockOK(e, at)
	}
	if good && e.Kind&resendFlag == 0 {
		run.recordLag(e, ks)
	}
	if r.Err {
		h.errors.Add(1)
		addCode(h.codes, r.Code(), 1)
		if h.firstErr == "" {
			h.firstErr = errorText(r.Text)
		}
		if run.cfg.OnErrorReply != nil {
			run.cfg.OnErrorReply(r.Text)
		}
		if kc != nil {
			kc.errors++
			kc.noteError(r.Code())
			ks.errors.Add(1)
		}
		return
	}
	if good {
		run.recordAt(e, at, ks)
		recv := t.Read - at
		run.receive.Record(recv)
		if ks != nil && ks.receive != nil {
			ks.receive.Record(recv)
		}
		if h.nodeResp != nil {
			h.nodeResp.Record(at - e.Intended)
			h.nodeServ.Record(at - e.Written)
			h.nodeRecv.Record(recv)
		}
	}
	if kc != nil {
		kc.completed++
		ks.completed.Add(1)
	}
	h.completed.Add(1)
}

// warmReply counts the reply to a warmup request: nothing else of it is
// kept, but error replies still reach OnErrorReply and a reply read before
// its request was written still counts as unsolicited.
func (h *replies) warmReply(e *conn.Entry, r conn.Reply, at int64) {
	if at != 0 && e.Written != 0 && at < e.Written {
		h.early.Add(1)
	}
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
func (run *openRun) kindOf(h *replies, e *conn.Entry) (*kindStats, *kindCount) {
	k := e.Kind & kindMask
	if run.kinds == nil || int(k) >= len(run.kinds) {
		return nil, nil
	}
	return &run.kinds[k], &h.kinds[k]
}

// recordLag adds e's send lag to the total and to its command's stats.
func (run *openRun) recordLag(e *conn.Entry, ks *kindStats) {
	run.lag.Record(e.Written - e.Intended)
	if ks != nil && ks.lag != nil {
		ks.lag.Record(e.Written - e.Intended)
	}
}

// recordAt adds e's response and service times as of t (its reply, or the
// moment it was given up on) to the total and to its command's stats.
func (run *openRun) recordAt(e *conn.Entry, t int64, ks *kindStats) {
	run.response.Record(t - e.Intended)
	run.service.Record(t - e.Written)
	if ks != nil && ks.response != nil {
		ks.response.Record(t - e.Intended)
		ks.service.Record(t - e.Written)
	}
}

type openRun struct {
	cfg                             OpenConfig
	response, service, lag, receive *histo.Recorder
	// host measures the client machine during the run; live is the view
	// handed to OnStart.
	host        *hostWatch
	live        *Live
	kinds       []kindStats // per command of a mix; nil for one
	slots       []*slot     // pacer-owned (observers: shown)
	view        atomic.Pointer[[]*slot]
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
	series    *series     // set when the timeline starts
	cl        *clusterRun // nil without cfg.Cluster
	// liveTL is scheduledBy's own timeline (see forker), and liveWarm
	// its count of the warmup's requests (-1: not counted yet).
	liveTLMu sync.Mutex
	liveTL   Timeline
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
	// joinLog holds the cluster nodes that joined, for observers (Live).
	joinMu  sync.Mutex
	joinLog []NodeJoin
}

// joinsSince returns the nodes that joined, from the from-th on.
func (run *openRun) joinsSince(from int) []NodeJoin {
	run.joinMu.Lock()
	defer run.joinMu.Unlock()
	if from >= len(run.joinLog) {
		return nil
	}
	return append([]NodeJoin(nil), run.joinLog[max(from, 0):]...)
}

// Redial backoff: a slot waits MinRedialBackoff before its first redial
// and doubles the wait after every dial that fails and every replacement
// that dies without completing a request, up to MaxRedialBackoff. Only a
// replacement that completes a request resets it, so a server that
// accepts and at once closes (or refuses with maxclients) is retried a few
// times a second per slot, not thousands.
const (
	MinRedialBackoff = 10 * time.Millisecond
	MaxRedialBackoff = time.Second
)

// MaxConcurrentRedials bounds the redials of a run in progress at once, as
// conn.DialSome bounds the first dials: 1900 slots refused by maxclients
// redialed together, each dial holding its buffers, and the run peaked at
// 413 MB (bench/bounds maxclients-100-c2000). The others wait their turn.
const MaxConcurrentRedials = 32

// nextBackoff doubles a redial wait, within [MinRedialBackoff,
// MaxRedialBackoff].
func nextBackoff(d time.Duration) time.Duration {
	return min(max(2*d, MinRedialBackoff), MaxRedialBackoff)
}

// redialed is a replacement connection and the slot's backoff after it.
type redialed struct {
	c       *conn.Conn
	backoff time.Duration
}

// slot is one of the run's connections: the live conn (nil while one is
// being dialed) and the reply handler that outlives conns.
type slot struct {
	c       *conn.Conn
	h       *replies
	next    chan redialed // a redial delivers here
	dialing bool          // pacer-owned
	// backoff is the wait before the slot's next redial; completedAt is
	// h.completed when c was installed (both pacer-owned).
	backoff     time.Duration
	completedAt uint64
	sent        atomic.Uint64 // measured requests written by retired conns of this slot
	warmSent    atomic.Uint64 // warmup requests written by retired conns of this slot
	// warmQueued counts the warmup requests queued on the current conn:
	// its first warmQueued entries, as a conn's FIFO is in timeline order.
	warmQueued atomic.Uint64
	bytesOut   atomic.Uint64 // bytes written by retired conns of this slot
	bytesIn    atomic.Uint64 // bytes read by retired conns of this slot
	live       atomic.Pointer[conn.Conn]
	// Cluster runs: the slot's node and its address (immutable); extra
	// counts the entries queued on the current conn that are no first
	// send (resends, ASKING); left is what its retired conns left (pacer,
	// then finish).
	node  int
	addr  string
	extra atomic.Uint64
	// group is the slot's connection group (OpenConfig.Groups).
	group int
	left  struct{ errors, timeouts, unsent uint64 }
	// sw, in a run of steps, is the slot's handler for every connection it
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
func (s *slot) counts(c *conn.Conn) connCounts {
	n := connCounts{c.Written(), c.BytesWritten(), c.BytesRead(), c.Unsolicited()}
	if c == s.carried {
		b := s.base
		n = connCounts{n.written - min(n.written, b.written), n.bytesOut - min(n.bytesOut, b.bytesOut),
			n.bytesIn - min(n.bytesIn, b.bytesIn), n.unsolicited - min(n.unsolicited, b.unsolicited)}
	}
	return n
}

// handler is what the slot's connections are started with.
func (s *slot) handler() conn.Handler {
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
func (run *openRun) totals() Totals {
	var t Totals
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
		run.liveTL, run.liveWarm = forTimeline(run.cfg.Timeline), -1
	}
	cfg := run.cfg
	cfg.Timeline = run.liveTL
	end, limit := int64(math.MaxInt64), uint64(math.MaxUint64)
	if cfg.Duration > 0 {
		end = int64(cfg.Duration)
	}
	if cfg.Requests > 0 {
		limit = requestLimit(cfg.Timeline, cfg.Requests)
	}
	// The warmup's count first, once: later calls then read forward only
	// (a trace's cursor walks its file; going back reopens it).
	if run.liveWarm < 0 {
		run.liveWarm = 0
		if cfg.Warmup > 0 {
			run.liveWarm = int64(countFrom(cfg.Timeline, 0, min(int64(cfg.Warmup), end), limit))
		}
	}
	n := countFrom(cfg.Timeline, 0, min(off, end), limit)
	run.liveLast = n - min(n, uint64(run.liveWarm))
	return run.liveLast
}

// closeLive releases scheduledBy's timeline.
func (run *openRun) closeLive() {
	run.liveTLMu.Lock()
	defer run.liveTLMu.Unlock()
	run.liveDone = true
	if run.liveTL != nil {
		closeTimeline(run.liveTL)
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

// conn returns the slot's connection for observers on other goroutines.
func (s *slot) conn() *conn.Conn { return s.live.Load() }

// set installs c (nil: none) for the pacer and for observers.
func (s *slot) set(c *conn.Conn) {
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

// redial replaces slot s's connection in the background: it waits the
// slot's backoff, dials, and on failure doubles the wait and tries again,
// until it delivers a connection or the run stops. Called by the pacer
// only; nothing waits for it.
func (run *openRun) redial(s *slot) {
	s.dialing = true
	wait := s.backoff
	ctx := run.redialCtx
	go func() {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			wait = nextBackoff(wait)
			select {
			case <-ctx.Done():
				return
			case run.dialing <- struct{}{}:
			}
			c, err := run.dial(ctx, s)
			<-run.dialing
			run.handoffMu.Lock()
			switch {
			case err == nil && !run.closed:
				s.next <- redialed{c, wait} // never blocks: one redial per slot at a time
			case err == nil:
				c.Close()
			case run.dialErr == nil && ctx.Err() == nil:
				run.dialErr = err
			}
			run.handoffMu.Unlock()
			if err == nil || ctx.Err() != nil {
				return
			}
			timer.Reset(wait)
		}
	}()
}

// maintain replaces dead connections, expires those whose oldest request
// passed cfg.Timeout, and installs redialed ones. Called by the pacer
// about once a millisecond.
func (p *pacer) maintain(now int64) {
	run := p.run
	for i, s := range run.slots {
		if s.c != nil && run.cfg.Timeout > 0 {
			if w, ok := s.c.OldestWritten(); ok && now-w > int64(run.cfg.Timeout) {
				s.c.Expire()
			}
		}
		if s.c != nil && s.c.Dead() {
			p.retire(i)
		}
		if s.c == nil {
			select {
			case r := <-s.next:
				s.dialing = false
				s.backoff, s.completedAt = r.backoff, s.h.completed.Load()
				if run.cl != nil {
					s.h.seq = 0 // before the reader starts
					run.cl.stores[i].reset()
					s.extra.Store(0)
					run.cl.members[s.node].down = false // a joined node that could not be reached is back
				}
				r.c.Start(s.handler())
				s.set(r.c)
				run.reconnects.Add(1)
			default:
				if !s.dialing && run.canRedial() && !p.stop.Load() {
					run.redial(s)
				}
			}
		}
	}
}

// retire closes slot i's dead connection and accounts for what it left.
func (p *pacer) retire(i int) {
	run := p.run
	s := run.slots[i]
	c := s.c
	s.c = nil // observers keep seeing it until account moves its counts
	if s.h.completed.Load() > s.completedAt {
		s.backoff = MinRedialBackoff // it served: the next redial is a fresh start
	}
	if p.isDirty[i] {
		p.isDirty[i] = false
		keep := p.dirty[:0]
		for _, j := range p.dirty {
			if j != i {
				keep = append(keep, j)
			}
		}
		p.dirty = keep
	}
	c.Close()
	run.connsLost.Add(1)
	if run.cl != nil {
		// Its reader has exited: every redirect it saw is queued.
		p.clusterWake(nanotime() - p.t0)
	}
	run.account(c, s, nanotime(), &run.tally)
}

// account adds what a closed connection left to t: unanswered requests are
// errors ("connection lost", or "protocol error"), or timeouts when the
// connection expired or the run gave up on them at end; unwritten ones are
// unsent. It also counts what the connection wrote.
func (run *openRun) account(c *conn.Conn, s *slot, end int64, t *tally) {
	h := s.h
	err := c.Err()
	code := CodeConnectionLost
	timedOut := err == nil || errors.Is(err, conn.ErrTimeout)
	if errors.Is(err, conn.ErrProtocol) {
		code = codeProtocolError
	}
	if err != nil && !timedOut && t.firstErr == "" {
		t.firstErr = err.Error()
	}
	n := s.counts(c)
	t.unsolicited += n.unsolicited
	errors0, timeouts0, unsent0 := t.errors, t.timeouts, t.unsent
	codeBytes := []byte(code)
	c.Unanswered(func(e *conn.Entry) {
		if e.Kind&askingFlag != 0 {
			return
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
			case code == CodeConnectionLost:
				kc.lost++
			default:
				kc.errors++
				kc.noteError(codeBytes)
			}
			return
		}
		// Its age so far, so a server that stops answering never looks fast.
		t.timeouts++
		if good {
			run.recordAt(e, end, ks)
		}
		if kc != nil {
			kc.timeouts++
		}
	})
	// A cluster conn's resends left unwritten were sent once: they are
	// errors; its ASKINGs are no requests.
	written, unwritten := n.written, uint64(c.Unwritten())
	if run.cl != nil {
		var extraUnsent uint64
		c.Unsent(func(e *conn.Entry) {
			if e.Kind&(askingFlag|resendFlag) == 0 {
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
					kc.errors++
					kc.noteError([]byte(codeResendUnsent))
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
			if run.warm(e) && e.Kind&(askingFlag|resendFlag) == 0 {
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
				h.kinds[e.Kind].unsent++
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

// canRedial reports whether dead connections are replaced.
func (run *openRun) canRedial() bool {
	if run.cl != nil {
		return run.cl.cfg.Dial != nil
	}
	return run.cfg.Redial != nil || run.cfg.RedialGroup != nil
}

// dial opens a replacement for slot s: to its node in a cluster run.
func (run *openRun) dial(ctx context.Context, s *slot) (*conn.Conn, error) {
	switch {
	case run.cl != nil:
		return run.cl.cfg.Dial(ctx, s.addr)
	case run.cfg.RedialGroup != nil:
		return run.cfg.RedialGroup(ctx, s.group)
	}
	return run.cfg.Redial(ctx)
}

// moveCounts adds what connection c of slot s wrote and read (n, split
// into the warmup's and the measured writes) to t and to the slot's
// retired counts. Observers (liveCounts) count a slot's live connection's
// writes and the retired ones' in s.sent: they move over in one step, so
// the last progress line neither loses nor doubles them.
func (run *openRun) moveCounts(c *conn.Conn, s *slot, n connCounts, t *tally) {
	warmSent, sent := splitWritten(n.written, s.warmQueued.Load())
	t.sent += sent
	s.live.CompareAndSwap(c, nil)
	s.sent.Add(sent)
	s.warmSent.Add(warmSent)
	s.warmQueued.Store(0) // the next conn starts its own count
	s.bytesOut.Add(n.bytesOut)
	s.bytesIn.Add(n.bytesIn)
}
