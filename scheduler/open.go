package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
)

// Commands yields what to send: the next command's encoded bytes (valid
// until the next call) and its kind. Implemented by scenarios.Stream.
type Commands interface {
	Next() (cmd []byte, kind uint32)
}

// OpenConfig configures an open-model run.
type OpenConfig struct {
	// Name labels the result.
	Name string
	// Timeline plans the sends. Required.
	Timeline Timeline
	// Rate is the timeline's rate, for the report.
	Rate Rate
	// Duration is the length of the timeline: requests with an offset
	// below it are scheduled. Zero means Requests bounds the run.
	Duration time.Duration
	// Requests bounds the number of requests. Zero means Duration does.
	Requests uint64
	// Pacing chooses precise or coarse waiting.
	Pacing Pacing
	// Drain is how long to wait for replies after the timeline ends before
	// the rest count as timeouts. Default DefaultDrain.
	Drain time.Duration
	// InterruptDrain replaces Drain when the run is interrupted. Default 2s.
	InterruptDrain time.Duration
	// LagLimit is the send-lag p99 above which the verdict is
	// generator_behind. Default DefaultLagLimit(Pacing).
	LagLimit time.Duration
	// OnStart, if set, receives a view of the running test.
	OnStart func(*Live)
	// Commands names the commands of a mix, by kind; with more than one,
	// the result also holds per-command results.
	Commands []string
	// Redial, when set, opens a replacement connection; dead connections
	// are then replaced with bounded backoff while the timeline goes on.
	Redial func(ctx context.Context) (*conn.Conn, error)
	// Timeout, when set, ends a connection whose oldest request has waited
	// longer since its write: its requests become timeouts and it is
	// replaced (with Redial). Zero: no timeout (the default).
	Timeout time.Duration
	// OnErrorReply, if set, sees every error reply's text, from the
	// connections' reader goroutines (concurrently).
	OnErrorReply func(text []byte)
	// MaxBacklog bounds how late a request may be sent: one whose intended
	// time is further in the past when its turn comes is counted unsent.
	// Default DefaultMaxBacklog.
	MaxBacklog time.Duration
}

// DefaultMaxBacklog is how late the open loop still sends a request.
const DefaultMaxBacklog = 10 * time.Second

// DefaultDrain is how long an open run waits for the last replies.
const DefaultDrain = 5 * time.Second

// DefaultLagLimit is the send-lag p99 a healthy generator stays under: 1 ms
// with precise pacing, 2 ms with coarse pacing (whose wake quantum alone is
// about 1 ms).
func DefaultLagLimit(p Pacing) time.Duration {
	if p == Coarse {
		return 2 * time.Millisecond
	}
	return time.Millisecond
}

// MinSentFraction is the share of scheduled requests that must have been
// sent by the end of the timeline for the verdict to be ok.
const MinSentFraction = 0.995

// batchPerConn is how many due commands one connection takes in a wake
// before the next connection takes over.
const batchPerConn = 64

// yieldEvery is how often the pacer yields to the scheduler itself.
const yieldEvery = int64(4 * time.Millisecond)

// maxPerWake bounds the commands queued in one wake before they are
// flushed, so a large backlog starts leaving at once.
const maxPerWake = 8192

// Validate checks the configuration.
func (c *OpenConfig) Validate() error {
	if c.Timeline == nil {
		return errors.New("open run without a timeline")
	}
	if c.Duration <= 0 && c.Requests == 0 {
		return errors.New("open run needs a duration or a request count")
	}
	if c.Duration < 0 || c.Drain < 0 || c.LagLimit < 0 {
		return errors.New("negative duration")
	}
	return nil
}

func (c OpenConfig) withDefaults() OpenConfig {
	if c.Drain == 0 {
		c.Drain = DefaultDrain
	}
	if c.InterruptDrain == 0 {
		c.InterruptDrain = 2 * time.Second
	}
	if c.LagLimit == 0 {
		c.LagLimit = DefaultLagLimit(c.Pacing)
	}
	if c.MaxBacklog <= 0 {
		c.MaxBacklog = DefaultMaxBacklog
	}
	return c
}

// replies is the Handler of one connection: it runs on that connection's
// reader goroutine and records into the shared lock-free recorders.
type replies struct {
	run       *openRun
	completed atomic.Uint64
	errors    atomic.Uint64
	kinds     []kindCount       // per command of a mix; read after the reader exits
	last      int64             // arrival of the latest reply; read after the reader exits
	codes     map[string]uint64 // error replies by code; read after the reader exits
	firstErr  string
	_         [64]byte // keep neighbouring handlers' counters apart
}

func (h *replies) Reply(e *conn.Entry, r conn.Reply, at int64) {
	run := h.run
	h.last = at
	ks, kc := run.kindOf(h, e)
	run.recordLag(e, ks)
	if r.Err {
		h.errors.Add(1)
		h.noteError(r.Code())
		if run.cfg.OnErrorReply != nil {
			run.cfg.OnErrorReply(r.Text)
		}
		if kc != nil {
			kc.errors++
			kc.noteError(string(r.Code()))
		}
		return
	}
	run.recordAt(e, at, ks)
	if kc != nil {
		kc.completed++
	}
	h.completed.Add(1)
}

// kindOf returns the per-command stats and h's tally for e's command, or
// nils in a single-command test.
func (run *openRun) kindOf(h *replies, e *conn.Entry) (*kindStats, *kindCount) {
	if run.kinds == nil || int(e.Kind) >= len(run.kinds) {
		return nil, nil
	}
	return &run.kinds[e.Kind], &h.kinds[e.Kind]
}

// recordLag adds e's send lag to the total and to its command's stats.
func (run *openRun) recordLag(e *conn.Entry, ks *kindStats) {
	run.lag.Record(e.Written - e.Intended)
	if ks != nil {
		ks.lag.Record(e.Written - e.Intended)
	}
}

// recordAt adds e's response and service times as of t (its reply, or the
// moment it was given up on) to the total and to its command's stats.
func (run *openRun) recordAt(e *conn.Entry, t int64, ks *kindStats) {
	run.response.Record(t - e.Intended)
	run.service.Record(t - e.Written)
	if ks != nil {
		ks.response.Record(t - e.Intended)
		ks.service.Record(t - e.Written)
	}
}

func (h *replies) noteError(code []byte) {
	if h.codes == nil {
		h.codes = map[string]uint64{}
	}
	h.codes[string(code)]++ // no allocation for an existing key
	if h.firstErr == "" {
		h.firstErr = string(code)
	}
}

type openRun struct {
	cfg                    OpenConfig
	response, service, lag *histo.Recorder
	kinds                  []kindStats // per command of a mix; nil for one
	slots                  []*slot
	tally                  tally // requests of connections already retired
	redials                sync.WaitGroup
	redialCtx              context.Context
	stopRedials            context.CancelFunc
	connsLost              atomic.Uint64
	reconnects             atomic.Uint64
	dialErrMu              sync.Mutex
	dialErr                error
}

// slot is one of the run's connections: the live conn (nil while one is
// being dialed) and the reply handler that outlives conns.
type slot struct {
	c       *conn.Conn
	h       *replies
	next    chan *conn.Conn // a redial delivers here
	dialing bool            // pacer-owned
	sent    atomic.Uint64   // written by retired conns of this slot
	live    atomic.Pointer[conn.Conn]
}

// tally accumulates what retired connections leave: the pacer adds to it
// when it replaces a dead connection, finish when it closes the rest.
type tally struct {
	errors, timeouts, unsent, sent uint64
	codes                          map[string]uint64
	firstErr                       string
}

func (run *openRun) liveCounts() (sent, completed, errs uint64, inflight int) {
	for _, s := range run.slots {
		sent += s.sent.Load()
		if c := s.conn(); c != nil {
			sent += c.Written()
		}
		completed += s.h.completed.Load()
		errs += s.h.errors.Load()
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
	for _, s := range run.slots {
		if c := s.conn(); c != nil {
			if t, ok := c.OldestPending(); ok && (o == 0 || t < o) {
				o = t
			}
		}
	}
	return o
}

// RunOpen runs one open-model test over conns, freshly dialed with
// conn.Options.Now = Now; a nil entry is a connection that could not be
// opened. They are closed when it returns. Commands are sent when the
// timeline says, whatever the replies do; latency counts from the intended
// time. With cfg.Redial set, dead connections (and the nil ones) are
// replaced in the background with bounded backoff while the timeline goes
// on. Cancelling ctx stops the timeline early: the result is then marked
// Interrupted and still accounts for every request.
func RunOpen(ctx context.Context, conns []*conn.Conn, cmds Commands, cfg OpenConfig) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(conns) == 0 {
		return nil, errors.New("open run without connections")
	}
	cfg = cfg.withDefaults()
	run := &openRun{
		cfg:      cfg,
		response: histo.NewRecorder(),
		service:  histo.NewRecorder(),
		lag:      histo.NewRecorder(),
	}
	run.tally.codes = map[string]uint64{}
	run.redialCtx, run.stopRedials = context.WithCancel(context.Background())
	defer run.stopRedials()
	run.kinds = newKindStats(cfg.Commands, true)
	alive := 0
	for _, c := range conns {
		h := &replies{run: run}
		if run.kinds != nil {
			h.kinds = make([]kindCount, len(run.kinds))
		}
		s := &slot{h: h, next: make(chan *conn.Conn, 1)}
		s.set(c)
		if c != nil {
			c.Start(h)
			alive++
		}
		run.slots = append(run.slots, s)
	}
	if alive == 0 && cfg.Redial == nil {
		return nil, errors.New("open run without a live connection")
	}

	runtimeGC()

	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()

	p := newPacer(run, cmds, &stop)
	p.onStart = func(t0 int64) {
		if cfg.OnStart != nil {
			cfg.OnStart(&Live{start: t0, counts: run.liveCounts, oldest: run.oldest, Latency: run.response,
				Duration: cfg.Duration, Requests: cfg.Requests})
		}
	}
	p.run()
	run.stopRedials()
	interrupted := stop.Load()
	drain := cfg.Drain
	if interrupted {
		drain = min(drain, cfg.InterruptDrain)
	}
	p.drain(drain)
	res, err := run.finish(p, interrupted)
	if err == nil && p.failure != nil {
		err = p.failure
	}
	return res, err
}

// redial replaces slot s's connection in the background, retrying with
// backoff from 10 ms doubling to 1 s, until it succeeds or the timeline
// ends. Called by the pacer only.
func (run *openRun) redial(s *slot) {
	s.dialing = true
	run.redials.Add(1)
	go func() {
		defer run.redials.Done()
		backoff := 10 * time.Millisecond
		for {
			c, err := run.cfg.Redial(run.redialCtx)
			if err == nil {
				select {
				case s.next <- c:
				case <-run.redialCtx.Done():
					c.Close()
				}
				return
			}
			run.dialErrMu.Lock()
			if run.dialErr == nil {
				run.dialErr = err
			}
			run.dialErrMu.Unlock()
			select {
			case <-run.redialCtx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
		}
	}()
}

// maintain replaces dead connections, expires those whose oldest request
// passed cfg.Timeout, and installs redialed ones. Called by the pacer
// about once a millisecond.
func (p *pacer) maintain(now int64) {
	run := p.o
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
			case c := <-s.next:
				s.dialing = false
				c.Start(s.h)
				s.set(c)
				run.reconnects.Add(1)
			default:
				if !s.dialing && run.cfg.Redial != nil && !p.stop.Load() {
					run.redial(s)
				}
			}
		}
	}
}

// retire closes slot i's dead connection and accounts for what it left.
func (p *pacer) retire(i int) {
	run := p.o
	s := run.slots[i]
	c := s.c
	s.set(nil)
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
	run.account(c, s, nanotime(), &run.tally)
}

// account adds what a closed connection left to t: unanswered requests are
// errors ("connection lost", or "protocol error"), or timeouts when the
// connection expired or the run gave up on them at end; unwritten ones are
// unsent. It also counts what the connection wrote.
func (run *openRun) account(c *conn.Conn, s *slot, end int64, t *tally) {
	h := s.h
	err := c.Err()
	code := ErrConnectionLost
	timedOut := err == nil || errors.Is(err, conn.ErrTimeout)
	if errors.Is(err, conn.ErrProtocol) {
		code = "protocol error"
	}
	if err != nil && !timedOut && t.firstErr == "" {
		t.firstErr = err.Error()
	}
	c.Unanswered(func(e *conn.Entry) {
		ks, kc := run.kindOf(h, e)
		run.recordLag(e, ks)
		if !timedOut {
			t.errors++
			t.codes[code]++
			switch {
			case kc == nil:
			case code == ErrConnectionLost:
				kc.lost++
			default:
				kc.errors++
				kc.noteError(code)
			}
			return
		}
		// Its age so far, so a server that stops answering never looks fast.
		t.timeouts++
		run.recordAt(e, end, ks)
		if kc != nil {
			kc.timeouts++
		}
	})
	t.sent += c.Written()
	s.sent.Add(c.Written())
	t.unsent += uint64(c.Unwritten())
	if run.kinds != nil {
		c.Unsent(func(e *conn.Entry) {
			if int(e.Kind) < len(h.kinds) {
				h.kinds[e.Kind].unsent++
			}
		})
	}
}

// pacer walks the timeline on one goroutine and writes what is due straight
// to the sockets: one write per connection per wake.
//
//	wake ──► queue every command with intended ≤ now (a wake's commands go
//	         to one connection, up to batchPerConn, then the next with FIFO
//	         room) ──► one write per dirty connection
//	     ──► sleep until the next intended instant (precise) or at least
//	         CoarseQuantum (coarse)
type pacer struct {
	o     *openRun
	cmds  Commands
	tl    Timeline
	stop  *atomic.Bool
	t0    int64
	end   int64  // timeline end offset: requests with offset < end are scheduled
	limit uint64 // request count bound (MaxUint64 when the duration bounds)
	next  uint64 // next index to queue or drop
	// dropped counts requests skipped as unsent because they were more
	// than MaxBacklog late when their turn came.
	dropped uint64
	// blocked is how long the timeline was held back by full or missing
	// connections.
	blocked      int64
	blockedSince int64
	// stoppedAt is the offset at which an interrupted timeline stopped.
	stoppedAt    int64
	rr           int // next connection in rotation
	cur          int // connection taking this wake's commands
	taken        int // commands cur has taken in this wake
	lastWake     int64
	lastYield    int64
	lastMaintain int64
	onStart      func(t0 int64)
	dirty        []int
	isDirty      []bool
	failure      error
}

func newPacer(run *openRun, cmds Commands, stop *atomic.Bool) *pacer {
	cfg := run.cfg
	p := &pacer{
		o:       run,
		cmds:    cmds,
		tl:      cfg.Timeline,
		stop:    stop,
		limit:   math.MaxUint64,
		isDirty: make([]bool, len(run.slots)),
	}
	if cfg.Requests > 0 {
		p.limit = cfg.Requests
	}
	p.end = math.MaxInt64
	if cfg.Duration > 0 {
		p.end = int64(cfg.Duration)
	}
	if cfg.Requests > 0 {
		// A count-bounded timeline ends when request n would be due.
		p.end = min(p.end, cfg.Timeline.Offset(cfg.Requests))
	}
	return p
}

// Outcome of queueing what is due.
const (
	emitDone    = iota // nothing more is due yet
	emitCapped         // maxPerWake reached; more is due now
	emitBlocked        // no live connection has FIFO room
	emitNoConns        // every connection is dead and none will come back
)

// maintainEvery is how often the pacer looks after its connections.
const maintainEvery = int64(time.Millisecond)

func (p *pacer) run() {
	p.t0 = nanotime()
	if p.onStart != nil {
		p.onStart(p.t0)
	}
	for {
		now := nanotime()
		el := now - p.t0
		if now-p.lastMaintain >= maintainEvery {
			p.maintain(now)
			p.lastMaintain = now
		}
		horizon := el
		final := el >= p.end
		if final {
			horizon = p.end - 1 // everything scheduled is due
		}
		if p.stop.Load() {
			final = true
			p.stoppedAt = el
			p.end = min(p.end, el+1)
			horizon = min(horizon, el)
		}
		p.taken = batchPerConn // each wake starts on the next connection
		outcome := p.emit(horizon, el)
		p.flush()
		p.noteBlocked(outcome == emitBlocked, now)
		if outcome == emitNoConns {
			p.failure = errors.New("all connections lost")
			p.stoppedAt = el
			p.end = min(p.end, el+1)
			return
		}
		if final || p.next >= p.limit {
			return
		}
		var wake int64
		switch outcome {
		case emitCapped:
			continue
		case emitBlocked:
			wake = now + p.pollInterval()
		default:
			wake = p.t0 + min(p.tl.Offset(p.next), p.end)
		}
		if len(p.dirty) > 0 { // bytes a full socket buffer refused
			wake = min(wake, now+p.pollInterval())
		}
		if p.o.cfg.Timeout > 0 || p.o.cfg.Redial != nil {
			wake = min(wake, now+int64(5*time.Millisecond)) // keep maintaining
		}
		// Yield at a moment of our choosing, before sleeping, at least every
		// yieldEvery: otherwise the runtime's monitor sees a goroutine that
		// never blocks (the sleep is a raw syscall) and preempts it every
		// 10 ms at an arbitrary instant, which showed as send lag p99 of
		// 0.5 ms instead of 0.1 ms at 10k/s.
		if now-p.lastYield >= yieldEvery {
			runtime.Gosched()
			p.lastYield = now
		}
		p.sleepUntil(now, wake)
	}
}

func (p *pacer) noteBlocked(blocked bool, now int64) {
	switch {
	case blocked && p.blockedSince == 0:
		p.blockedSince = now
	case !blocked && p.blockedSince != 0:
		p.blocked += now - p.blockedSince
		p.blockedSince = 0
	}
}

// pollInterval is how soon to look again when sends are blocked.
func (p *pacer) pollInterval() int64 {
	if p.o.cfg.Pacing == Coarse {
		return int64(CoarseQuantum)
	}
	return int64(100 * time.Microsecond)
}

// sleepUntil waits for the next wake. Coarse pacing wakes on a grid of
// CoarseQuantum (never sooner than one quantum after the previous wake
// target), so it costs at most one thread wake per quantum.
func (p *pacer) sleepUntil(now, wake int64) {
	if p.o.cfg.Pacing == Coarse {
		wake = max(wake, p.lastWake+int64(CoarseQuantum))
	}
	p.lastWake = wake
	// Sleep in bounded slices so a stop request is seen within 5 ms; a
	// slice's wake does no work, so it does not count for the quantum.
	if limit := now + int64(5*time.Millisecond); wake > limit {
		wake, p.lastWake = limit, 0
	}
	if !havePreciseSleep {
		time.Sleep(time.Duration(wake - now))
		return
	}
	preciseSleepUntil(wake)
}

// emit queues every command due by horizon (an offset); el is now. A
// request more than MaxBacklog late is dropped as unsent instead.
func (p *pacer) emit(horizon, el int64) int {
	n := 0
	maxLate := int64(p.o.cfg.MaxBacklog)
	for p.next < p.limit {
		off := p.tl.Offset(p.next)
		if off > horizon || off >= p.end {
			return emitDone
		}
		if el-off > maxLate {
			p.dropped++
			p.next++
			continue
		}
		i := p.pick()
		if i < 0 {
			if p.o.cfg.Redial != nil {
				return emitBlocked // connections will come back
			}
			for _, s := range p.o.slots {
				if s.c != nil && !s.c.Dead() {
					return emitBlocked
				}
			}
			return emitNoConns
		}
		cmd, kind := p.cmds.Next()
		p.o.slots[i].c.Queue(cmd, p.t0+off, kind)
		if !p.isDirty[i] {
			p.isDirty[i] = true
			p.dirty = append(p.dirty, i)
		}
		p.next++
		if n++; n == maxPerWake {
			return emitCapped
		}
	}
	return emitDone
}

// usable reports whether slot i can take a command now.
func (p *pacer) usable(i int) bool {
	c := p.o.slots[i].c
	return c != nil && !c.Dead() && c.Free() > 0
}

// pick returns the connection for the next command: the current one while
// it has taken fewer than batchPerConn commands in this wake, otherwise the
// next one in rotation that is alive and has FIFO room; -1 if none has.
// Keeping a wake's commands together makes them one write and, later, one
// read of replies, instead of one per command.
func (p *pacer) pick() int {
	n := len(p.o.slots)
	if p.taken < batchPerConn && p.usable(p.cur) {
		p.taken++
		return p.cur
	}
	for range n {
		i := p.rr
		if p.rr++; p.rr == n {
			p.rr = 0
		}
		if p.usable(i) {
			p.cur, p.taken = i, 1
			return i
		}
	}
	return -1
}

// flush writes each dirty connection once; connections whose socket
// buffer refused bytes stay dirty.
func (p *pacer) flush() {
	keep := p.dirty[:0]
	for _, i := range p.dirty {
		c := p.o.slots[i].c
		if c == nil {
			p.isDirty[i] = false
			continue
		}
		_ = c.Flush(nanotime()) // a failure marks c dead; maintain accounts for it
		if c.Pending() && !c.Dead() {
			keep = append(keep, i)
		} else {
			p.isDirty[i] = false
		}
	}
	p.dirty = keep
}

// drain waits up to d for the outstanding replies, still writing bytes a
// full socket buffer refused and expiring requests past cfg.Timeout.
func (p *pacer) drain(d time.Duration) {
	deadline := nanotime() + int64(d)
	for {
		p.flush()
		now := nanotime()
		outstanding := false
		for _, s := range p.o.slots {
			if c := s.c; c != nil && !c.Dead() && c.InFlight() > 0 {
				if w, ok := c.OldestWritten(); ok && p.o.cfg.Timeout > 0 && now-w > int64(p.o.cfg.Timeout) {
					c.Expire()
					continue
				}
				outstanding = true
			}
		}
		if !outstanding || now >= deadline {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// finish closes the connections and accounts for every request.
func (run *openRun) finish(p *pacer, interrupted bool) (*Result, error) {
	run.redials.Wait()
	for _, s := range run.slots {
		select {
		case c := <-s.next: // dialed too late to be used
			c.Close()
		default:
		}
		if s.c != nil {
			s.c.Close()
		}
	}
	end := nanotime()
	t := &run.tally
	for _, s := range run.slots {
		if s.c != nil {
			run.account(s.c, s, end, t)
		}
	}
	var cnt Counts
	codes := map[string]uint64{}
	firstErr := ""
	last := int64(0)
	for _, s := range run.slots {
		h := s.h
		cnt.Completed += h.completed.Load()
		cnt.Errors += h.errors.Load()
		for k, v := range h.codes {
			codes[k] += v
		}
		if firstErr == "" && h.firstErr != "" {
			firstErr = h.firstErr
		}
		last = max(last, h.last)
	}
	cnt.Errors += t.errors
	cnt.Timeouts += t.timeouts
	cnt.Sent += t.sent
	cnt.Unsent += t.unsent
	for k, v := range t.codes {
		codes[k] += v
	}
	if firstErr == "" {
		firstErr = t.firstErr
	}
	if firstErr == "" && run.dialErr != nil {
		firstErr = run.dialErr.Error()
	}
	// Requests due but never queued (connections full, dead, or a stop),
	// and those dropped for being too late.
	queued := p.next
	scheduled := countFrom(p.tl, queued, p.end, p.limit)
	cnt.Scheduled = scheduled
	cnt.Unsent += scheduled - queued + p.dropped
	p.noteBlocked(false, end)

	cfg := run.cfg
	windowEnd := p.end
	if windowEnd == math.MaxInt64 {
		windowEnd = 0
	}
	window := max(windowEnd, last-p.t0)
	res := &Result{
		Name:           cfg.Name,
		Mode:           "open",
		TargetRate:     cfg.Rate,
		Arrival:        cfg.Timeline.Name(),
		Pacing:         cfg.Pacing.String(),
		Connections:    len(run.slots),
		Counts:         cnt,
		T0:             p.t0,
		Window:         time.Duration(window),
		Response:       run.response.Snapshot(),
		Service:        run.service.Snapshot(),
		Lag:            run.lag.Snapshot(),
		ErrorCodes:     codes,
		FirstError:     firstErr,
		LagLimit:       cfg.LagLimit,
		Interrupted:    interrupted,
		Clamped:        run.response.Clamped() + run.service.Clamped() + run.lag.Clamped(),
		ConnsLost:      run.connsLost.Load(),
		Reconnects:     run.reconnects.Load(),
		Blocked:        time.Duration(p.blocked),
		DroppedBacklog: p.dropped,
	}
	if run.kinds != nil {
		tallies := make([][]kindCount, len(run.slots))
		for i, s := range run.slots {
			tallies[i] = s.h.kinds
		}
		res.Commands = commandResults(cfg.Commands, run.kinds, tallies)
	}
	res.Verdict, res.VerdictReason = verdict(res)
	if !cnt.Balanced() {
		return res, fmt.Errorf("internal error: counts do not add up: %+v", cnt)
	}
	return res, nil
}

// verdict decides whether the generator kept the timeline.
func verdict(r *Result) (string, string) {
	lagP99 := time.Duration(r.Lag.ValueAtQuantile(99))
	sentShare := 1.0
	if r.Counts.Scheduled > 0 {
		sentShare = float64(r.Counts.Sent) / float64(r.Counts.Scheduled)
	}
	why := ""
	if r.Blocked > 0 {
		why = fmt.Sprintf("; sends were held back %.1f s by full or missing connections", r.Blocked.Seconds())
	}
	switch {
	case r.Counts.Scheduled > 0 && sentShare < MinSentFraction:
		return VerdictGeneratorBehind, fmt.Sprintf("only %.2f%% of scheduled requests were sent (below %.1f%%)%s",
			sentShare*100, MinSentFraction*100, why)
	case lagP99 > r.LagLimit:
		return VerdictGeneratorBehind, fmt.Sprintf("send lag p99 %.3f ms is above %.3f ms%s",
			histo.Millis(int64(lagP99)), histo.Millis(int64(r.LagLimit)), why)
	}
	return VerdictOK, fmt.Sprintf("send lag p99 %.3f ms ≤ %.3f ms, %.2f%% of scheduled sent",
		histo.Millis(int64(lagP99)), histo.Millis(int64(r.LagLimit)), sentShare*100)
}

// runtimeGC collects the set-up garbage (rings, recorders, buffers) before
// a timeline starts, so no collection lands in the measured window.
func runtimeGC() { runtime.GC() }
