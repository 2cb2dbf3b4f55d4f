package openloop

import (
	"errors"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// pacer walks the timeline on one goroutine and writes what is due straight
// to the sockets: one write per connection per wake.
//
//	wake ──► queue every command with intended ≤ now (a wake's commands go
//	         to one connection, up to batchPerConn, then the next with FIFO
//	         room) ──► one write per dirty connection
//	     ──► sleep until the next intended instant, but at least one
//	         quantum after the previous wake (0 precise, scheduler.CoarseQuantum
//	         coarse, from the lag limit auto: scheduler.Pacing.Quantum)
type pacer struct {
	run  *openRun
	cmds scheduler.Commands
	tl   timeline.Timeline
	stop *atomic.Bool
	t0   int64
	// quantum is the least time between wake targets, in ns (0: wake at
	// every due instant); back, when auto pacing paces finer than its
	// default, may make it coarser during the run, and stepped is then
	// when and why.
	quantum int64
	back    *stepBack
	stepped []scheduler.PacingStep
	end     int64  // timeline end offset: requests with offset < end are scheduled
	limit   uint64 // request count bound (MaxUint64 when the duration bounds)
	next    uint64 // next index to queue or drop
	// dropped counts requests skipped as unsent because they were more
	// than MaxBacklog late when their turn came; warmDropped those of the
	// warmup.
	dropped, warmDropped uint64
	// warmup is the offset where the measured window starts (0: none).
	warmup int64
	// blocked is how long the timeline was held back by full or missing
	// connections.
	blocked      int64
	blockedSince int64
	// A held-back episode runs from the moment no connection could take
	// a due request until everything due is queued again: whatever is
	// queued or dropped meanwhile waited for the target. heldSent and
	// heldDropped count those requests over the closed episodes; epNext
	// and epDropped are next and dropped when the open one began.
	inEpisode             bool
	epNext, epDropped     uint64
	heldSent, heldDropped uint64
	// stoppedAt is the offset at which an interrupted timeline stopped.
	stoppedAt int64
	// firstWrite is when the first request was written, on the Now clock
	// (0 before any).
	firstWrite   int64
	rr           int // next connection in rotation
	cur          int // connection taking this wake's commands
	taken        int // commands cur has taken in this wake
	lastWake     int64
	lastYield    int64
	lastMaintain int64
	// grouper, groups and groupRR route a grouped stream's commands: the
	// lanes of each group and each group's rotation.
	grouper Grouper
	groups  [][]int
	groupRR []int
	// onPrepare runs before the timeline's start is chosen, onStart once
	// it is (t0).
	onPrepare func()
	onStart   func(t0 int64)
	// stamper, when the stream is one, is told each request's place.
	stamper scheduler.Stamper
	dirty   []int
	isDirty []bool
	failure error
	slice   sliceHolder
	cl      *clusterRun // nil without a cluster
	routes  *routes     // nil unless reads go to replicas
}

// sliceHolder keeps a short time slice (clock.ShortSlice) on the OS thread
// that runs the pacer, moving it when the goroutine changes threads. Every
// sleep hands the CPU to whatever is runnable, and with the default slice
// the pacer's wake then waited until that task blocked or a scheduler tick
// (4 ms at HZ=250) ended its slice, even with the other CPU idle (seen in
// kernel scheduler traces). Arrivals that sleep often and long met it most:
// at 10k/s Poisson gaps are exponential, while uniform sends run late by
// about the timer slack and barely sleep; when other processes came and
// went, a Poisson run's send-lag p99 reached 1.1–1.7 ms against 0.13–0.19
// ms for uniform. Under EEVDF (Linux 6.12 and later) a waking task with a
// shorter slice than the running one may preempt it at once; where the
// kernel has no per-task slice this does nothing.
//
// The thread also gets a timer slack of 1 ns (clock.PreciseTimers): with
// the default 50 µs a precise sleep woke up to 50 µs after its deadline,
// which every uniform send paid as send lag. A thread's slack can only be
// changed by itself, so a thread the goroutine left keeps the short slack
// (it costs that thread's other sleeps only their batching); the thread
// the loop ends on gets the default back.
type sliceHolder struct {
	tid   int  // the thread holding the short slice, 0 for none
	off   bool // the kernel refused: ask no more
	timer int  // the thread last given precise timers, 0 for none
}

// hold gives the calling thread the short slice and precise timers, and
// the thread that had the slice the default one back.
func (s *sliceHolder) hold() {
	tid := clock.Thread()
	if tid != s.timer && clock.PreciseTimers() {
		s.timer = tid
	}
	if s.off || tid == s.tid {
		return
	}
	s.releaseSlice()
	if clock.SetShortSlice(tid) {
		s.tid = tid
	} else {
		s.off = true
	}
}

// release gives the thread holding the short slice the default one back,
// and the calling thread its default timer slack.
func (s *sliceHolder) release() {
	s.releaseSlice()
	if s.timer == clock.Thread() {
		clock.DefaultTimers()
		s.timer = 0
	}
}

// releaseSlice gives the thread holding the short slice the default one
// back.
func (s *sliceHolder) releaseSlice() {
	if s.tid != 0 {
		clock.ResetSlice(s.tid)
		s.tid = 0
	}
}

func newPacer(run *openRun, cmds scheduler.Commands, stop *atomic.Bool) *pacer {
	cfg := run.cfg
	p := &pacer{
		run:     run,
		cmds:    cmds,
		tl:      cfg.Timeline,
		stop:    stop,
		limit:   math.MaxUint64,
		isDirty: make([]bool, len(run.lanes)),
		quantum: int64(cfg.Pacing.Quantum(cfg.LagLimit)),
		back:    newStepBack(cfg, cfg.readCPU),
		warmup:  int64(cfg.Warmup),
		cl:      run.cl,
	}
	p.stamper, _ = cmds.(scheduler.Stamper)
	if g, ok := cmds.(Grouper); ok && len(cfg.Groups) > 0 {
		p.grouper = g
		for i, grp := range cfg.Groups {
			for grp >= len(p.groups) {
				p.groups = append(p.groups, nil)
			}
			p.groups[grp] = append(p.groups[grp], i)
		}
		p.groupRR = make([]int, len(p.groups))
	}
	p.end = math.MaxInt64
	if cfg.Duration > 0 {
		p.end = int64(cfg.Duration)
	}
	if cfg.Requests > 0 {
		// A count-bounded timeline ends when request n would be due (for
		// a shard: the whole timeline's request n).
		p.limit = timeline.RequestLimit(cfg.Timeline, cfg.Requests)
		p.end = min(p.end, timeline.RequestEnd(cfg.Timeline, cfg.Requests))
	}
	run.span = p.end
	p.routes = newRoutes(run)
	return p
}

// emitOutcome is what queueing the due commands ended on.
type emitOutcome int

const (
	emitDone    emitOutcome = iota // nothing more is due yet
	emitCapped                     // maxPerWake reached; more is due now
	emitBlocked                    // no live connection has FIFO room
	emitNoConns                    // every connection is dead and none will come back
)

// maintainEvery is how often the pacer looks after its connections.
const maintainEvery = int64(time.Millisecond)

// maintainSlice bounds the sleep while connections need looking after
// (timeouts to expire, redials to install).
const maintainSlice = int64(5 * time.Millisecond)

// stopSlice bounds any one sleep, so a stop request is seen within it.
const stopSlice = int64(5 * time.Millisecond)

// blockedPoll is how soon precise pacing looks again when no connection
// can take a command (pacing with a quantum waits a quantum).
const blockedPoll = int64(100 * time.Microsecond)

// drainPoll is how often the drain looks for the last replies.
const drainPoll = time.Millisecond

// loop walks the timeline until its end, a stop, or the loss of every
// connection, on a thread that holds a short time slice (sliceHolder).
func (p *pacer) loop() {
	defer p.slice.release()
	p.slice.hold()
	if havePreciseSleep {
		defer clock.HoldP()() // its raw sleeps keep a P: the runtime gets another
	}
	if p.onPrepare != nil {
		p.onPrepare()
	}
	p.t0 = nanotime()
	if start := p.run.cfg.Start; start != 0 {
		if p.waitStart(start) {
			p.t0 = start
		} else {
			p.t0, p.end = nanotime(), 0 // stopped while waiting: nothing is scheduled
		}
	}
	if p.onStart != nil {
		p.onStart(p.t0)
	}
	p.back.start(p.t0)
	defer func() { p.stepped = p.back.stop() }()
	if p.stamper != nil {
		p.stamper.Begin(p.t0)
	}
	for {
		now := nanotime()
		el := now - p.t0
		if now-p.lastMaintain >= maintainEvery {
			p.maintain(now)
			p.lastMaintain = now
		}
		if c := p.run.cut.Load(); c > 0 && c < p.end {
			p.end = c // a look decided: the timeline ends here
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
		var outcome emitOutcome
		if p.cl != nil {
			outcome = p.emitCluster(horizon, el)
		} else {
			outcome = p.emit(horizon, el)
		}
		p.flush()
		p.noteBlocked(outcome == emitBlocked, now)
		if outcome == emitDone {
			p.caughtUp()
		}
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
		if len(p.dirty) > 0 || p.cl != nil && p.waiting() { // bytes a full socket buffer refused, requests waiting
			wake = min(wake, now+p.pollInterval())
		}
		if p.run.cfg.Timeout > 0 || p.run.canRedial() {
			wake = min(wake, now+maintainSlice) // keep maintaining
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
		if p.back != nil {
			p.quantum = p.back.current()
		}
		p.slice.hold() // the goroutine may have changed threads
		if p.run.cfg.beforeSleep != nil {
			p.run.cfg.beforeSleep()
		}
		p.sleepUntil(now, wake)
	}
}

// startSlice bounds one sleep of the wait for a start instant, so a stop
// is seen within it; the last startSlice is slept precisely.
const startSlice = int64(50 * time.Millisecond)

// waitStart waits for the clock instant start (--start-at). It reports
// false if the run was stopped first.
func (p *pacer) waitStart(start int64) bool {
	for {
		if p.stop.Load() {
			return false
		}
		now := nanotime()
		if now >= start {
			return true
		}
		if start-now > startSlice {
			time.Sleep(time.Duration(min(start-now-startSlice, startSlice)))
			continue
		}
		p.sleepUntil(now, start)
	}
}

func (p *pacer) noteBlocked(blocked bool, now int64) {
	switch {
	case blocked && p.blockedSince == 0:
		p.blockedSince = now
		if !p.inEpisode {
			p.inEpisode, p.epNext, p.epDropped = true, p.next, p.dropped
		}
	case !blocked && p.blockedSince != 0:
		p.blocked += now - p.blockedSince
		p.blockedSince = 0
	}
}

// caughtUp closes a held-back episode: everything due is queued.
func (p *pacer) caughtUp() {
	if !p.inEpisode {
		return
	}
	p.inEpisode = false
	d := p.dropped - p.epDropped
	p.heldDropped += d
	p.heldSent += p.next - p.epNext - d
}

// pollInterval is how soon to look again when sends are blocked.
func (p *pacer) pollInterval() int64 {
	return max(p.quantum, blockedPoll)
}

// sleepUntil waits for the next wake. With a quantum (coarse, auto) the
// pacer wakes on a grid of it (never sooner than one quantum after the
// previous wake target), so it costs at most one thread wake per quantum.
func (p *pacer) sleepUntil(now, wake int64) {
	if p.quantum > 0 {
		wake = max(wake, p.lastWake+p.quantum)
	}
	p.lastWake = wake
	// Sleep in bounded slices so a stop request is seen within stopSlice;
	// a slice's wake does no work, so it does not count for the quantum.
	if limit := now + stopSlice; wake > limit {
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
func (p *pacer) emit(horizon, el int64) emitOutcome {
	if p.routes != nil {
		return p.emitRouted(horizon, el)
	}
	n := 0
	maxLate := int64(p.run.cfg.MaxBacklog)
	for {
		off, due := p.nextDue(horizon, el, maxLate)
		if !due {
			return emitDone
		}
		i := p.pickFor()
		if i < 0 {
			if p.run.cfg.Redial != nil {
				return emitBlocked // connections will come back
			}
			for _, s := range p.run.lanes {
				if s.c != nil && !s.c.Dead() {
					return emitBlocked
				}
			}
			return emitNoConns
		}
		if p.stamper != nil {
			p.stamper.Stamp(p.next, p.t0+off, p.t0+el)
		}
		cmd, kind := p.cmds.Next()
		s := p.run.lanes[i]
		if off < p.warmup {
			s.warmQueued.Add(1)
		}
		s.c.Queue(cmd, p.t0+off, kind)
		p.queueWait(s, kind, p.t0+off)
		if !p.isDirty[i] {
			p.isDirty[i] = true
			p.dirty = append(p.dirty, i)
		}
		p.next++
		if n++; n == maxPerWake {
			return emitCapped
		}
	}
}

// nextDue returns the offset of the next request due by horizon (el is
// now), first counting as unsent those more than maxLate late; due is
// false when no request is due yet or the timeline has ended.
func (p *pacer) nextDue(horizon, el, maxLate int64) (off int64, due bool) {
	for p.next < p.limit {
		off = p.tl.Offset(p.next)
		if off > horizon || off >= p.end {
			return 0, false
		}
		if el-off <= maxLate {
			return off, true
		}
		if off < p.warmup {
			p.warmDropped++
		} else {
			p.dropped++
			p.run.accounted.dropped.Add(1)
			p.run.droppedLate(p.t0 + off)
		}
		p.next++
	}
	return 0, false
}

// usable reports whether lane i can take a command now.
func (p *pacer) usable(i int) bool {
	s := p.run.lanes[i]
	return s.c != nil && !s.leaving && !s.c.Dead() && s.c.Free() > 0
}

// pickFor returns the connection for the next command: in its group when
// the stream groups its commands, else any (pick).
func (p *pacer) pickFor() int {
	if p.grouper == nil {
		return p.pick()
	}
	g := p.grouper.Group()
	if g < 0 || g >= len(p.groups) {
		return -1
	}
	in := p.groups[g]
	if len(in) == 0 {
		return -1
	}
	if p.taken < batchPerConn && p.run.lanes[p.cur].group == g && p.usable(p.cur) {
		p.taken++
		return p.cur
	}
	rr := &p.groupRR[g]
	for range in {
		i := in[*rr]
		if *rr++; *rr == len(in) {
			*rr = 0
		}
		if p.usable(i) {
			p.cur, p.taken = i, 1
			return i
		}
	}
	return -1
}

// pick returns the connection for the next command: the current one while
// it has taken fewer than batchPerConn commands in this wake, otherwise the
// next one in rotation that is alive and has FIFO room; -1 if none has.
// Keeping a wake's commands together makes them one write and, later, one
// read of replies, instead of one per command.
func (p *pacer) pick() int {
	n := len(p.run.lanes)
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
	if p.firstWrite == 0 && len(p.dirty) > 0 {
		p.firstWrite = nanotime()
	}
	keep := p.dirty[:0]
	for _, i := range p.dirty {
		c := p.run.lanes[i].c
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
//
// A stop that arrives during the drain (Ctrl-C after the timeline ended)
// cuts it to InterruptDrain from that moment; drain then reports true.
func (p *pacer) drain(d time.Duration, stopped bool) (interrupted bool) {
	deadline := nanotime() + int64(d)
	for {
		if !stopped && p.stop.Load() {
			stopped, interrupted = true, true
			deadline = min(deadline, nanotime()+int64(p.run.cfg.InterruptDrain))
		}
		if p.cl != nil {
			el := nanotime() - p.t0
			p.clusterWake(el)
			for k := range p.cl.taken {
				p.cl.taken[k] = batchPerConn
			}
			p.pump(el, p.t0+el)
		}
		p.flush()
		now := nanotime()
		outstanding := p.cl != nil && p.waiting()
		for _, s := range p.run.lanes {
			if c := s.c; c != nil && !c.Dead() && c.InFlight() > 0 {
				if w, ok := c.OldestWritten(); ok && p.run.cfg.Timeout > 0 && now-w > int64(p.run.cfg.Timeout) {
					c.Expire()
					continue
				}
				outstanding = true
			}
		}
		if !outstanding || now >= deadline {
			return interrupted
		}
		time.Sleep(drainPoll)
	}
}

// allGone reports whether no lane has a live connection: the target is
// lost if that is still so at the end of the timeline.
func (p *pacer) allGone() bool {
	for _, s := range p.run.lanes {
		if s.c != nil && !s.c.Dead() {
			return false
		}
	}
	return true
}
