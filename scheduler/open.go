package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
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
}

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
	lag := e.Written - e.Intended
	run.lag.Record(lag)
	h.last = at
	var ks *kindStats
	var kc *kindCount
	if run.kinds != nil && int(e.Kind) < len(run.kinds) {
		ks, kc = &run.kinds[e.Kind], &h.kinds[e.Kind]
		ks.lag.Record(lag)
	}
	if r.Err {
		h.errors.Add(1)
		h.noteError(r.Code())
		if kc != nil {
			kc.errors++
			kc.noteError(string(r.Code()))
		}
		return
	}
	run.response.Record(at - e.Intended)
	run.service.Record(at - e.Written)
	if ks != nil {
		ks.response.Record(at - e.Intended)
		ks.service.Record(at - e.Written)
		kc.completed++
	}
	h.completed.Add(1)
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
	conns                  []*conn.Conn
	handlers               []*replies
}

func (run *openRun) liveCounts() (sent, completed, errs uint64, inflight int) {
	for i, c := range run.conns {
		sent += c.Written()
		completed += run.handlers[i].completed.Load()
		errs += run.handlers[i].errors.Load()
	}
	return sent, completed, errs, int(sent - min(sent, completed+errs))
}

func (run *openRun) oldest() int64 {
	var o int64
	for _, c := range run.conns {
		if t, ok := c.OldestPending(); ok && (o == 0 || t < o) {
			o = t
		}
	}
	return o
}

// RunOpen runs one open-model test over conns, which must be freshly dialed
// with conn.Options.Now = Now and are closed when it returns. Commands are
// sent when the timeline says, whatever the replies do; latency counts from
// the intended time. Cancelling ctx stops the timeline early: the result is
// then marked Interrupted and still accounts for every request.
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
		conns:    conns,
	}
	run.kinds = newKindStats(cfg.Commands, true)
	for _, c := range conns {
		h := &replies{run: run}
		if run.kinds != nil {
			h.kinds = make([]kindCount, len(run.kinds))
		}
		run.handlers = append(run.handlers, h)
		c.Start(h)
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

// pacer walks the timeline on one goroutine and writes what is due straight
// to the sockets: one write per connection per wake.
//
//	wake ──► queue every command with intended ≤ now (round robin over
//	         connections with FIFO room) ──► one write per dirty connection
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
	next  uint64 // next index to queue
	// stoppedAt is the offset at which an interrupted timeline stopped.
	stoppedAt int64
	rr        int // next connection in rotation
	cur       int // connection taking this wake's commands
	taken     int // commands cur has taken in this wake
	lastWake  int64
	lastYield int64
	onStart   func(t0 int64)
	dirty     []int
	isDirty   []bool
	failure   error
}

func newPacer(run *openRun, cmds Commands, stop *atomic.Bool) *pacer {
	cfg := run.cfg
	p := &pacer{
		o:       run,
		cmds:    cmds,
		tl:      cfg.Timeline,
		stop:    stop,
		limit:   math.MaxUint64,
		isDirty: make([]bool, len(run.conns)),
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
	emitBlocked        // every live connection's FIFO is full
	emitNoConns        // every connection is dead
)

func (p *pacer) run() {

	p.t0 = nanotime()
	if p.onStart != nil {
		p.onStart(p.t0)
	}
	for {
		now := nanotime()
		el := now - p.t0
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
		outcome := p.emit(horizon)
		p.flush()
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

// emit queues every command due by horizon (an offset).
func (p *pacer) emit(horizon int64) int {
	n := 0
	for p.next < p.limit {
		off := p.tl.Offset(p.next)
		if off > horizon || off >= p.end {
			return emitDone
		}
		i := p.pick()
		if i < 0 {
			for _, c := range p.o.conns {
				if !c.Dead() {
					return emitBlocked
				}
			}
			return emitNoConns
		}
		cmd, kind := p.cmds.Next()
		p.o.conns[i].Queue(cmd, p.t0+off, kind)
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

// pick returns the connection for the next command: the current one while
// it has taken fewer than batchPerConn commands in this wake, otherwise the
// next one in rotation that is alive and has FIFO room; -1 if none has.
// Keeping a wake's commands together makes them one write and, later, one
// read of replies, instead of one per command.
func (p *pacer) pick() int {
	conns := p.o.conns
	if p.taken < batchPerConn {
		if c := conns[p.cur]; !c.Dead() && c.Free() > 0 {
			p.taken++
			return p.cur
		}
	}
	for range conns {
		i := p.rr
		if p.rr++; p.rr == len(conns) {
			p.rr = 0
		}
		if c := conns[i]; !c.Dead() && c.Free() > 0 {
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
		c := p.o.conns[i]
		_ = c.Flush(nanotime()) // a failure marks c dead; its requests are accounted at the end
		if c.Pending() && !c.Dead() {
			keep = append(keep, i)
		} else {
			p.isDirty[i] = false
		}
	}
	p.dirty = keep
}

// drain waits up to d for the outstanding replies, still writing bytes a
// full socket buffer refused.
func (p *pacer) drain(d time.Duration) {
	deadline := nanotime() + int64(d)
	for {
		p.flush()
		outstanding := false
		for _, c := range p.o.conns {
			if !c.Dead() && c.InFlight() > 0 {
				outstanding = true
				break
			}
		}
		if !outstanding || nanotime() >= deadline {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// finish closes the connections and accounts for every request.
func (run *openRun) finish(p *pacer, interrupted bool) (*Result, error) {
	for _, c := range run.conns {
		c.Close()
	}
	end := nanotime()
	var cnt Counts
	codes := map[string]uint64{}
	firstErr := ""
	last := int64(0)
	for i, c := range run.conns {
		h := run.handlers[i]
		cnt.Completed += h.completed.Load()
		cnt.Errors += h.errors.Load()
		for k, v := range h.codes {
			codes[k] += v
		}
		if firstErr == "" && h.firstErr != "" {
			firstErr = h.firstErr
		}
		last = max(last, h.last)
		lost := c.Err() != nil
		if lost && firstErr == "" {
			firstErr = c.Err().Error()
		}
		c.Unanswered(func(e *conn.Entry) {
			run.lag.Record(e.Written - e.Intended)
			var ks *kindStats
			var kc *kindCount
			if run.kinds != nil && int(e.Kind) < len(run.kinds) {
				ks, kc = &run.kinds[e.Kind], &h.kinds[e.Kind]
				ks.lag.Record(e.Written - e.Intended)
			}
			if lost {
				cnt.Errors++
				codes[ErrConnectionLost]++
				if kc != nil {
					kc.lost++
				}
				return
			}
			cnt.Timeouts++
			run.response.Record(end - e.Intended)
			run.service.Record(end - e.Written)
			if ks != nil {
				ks.response.Record(end - e.Intended)
				ks.service.Record(end - e.Written)
				kc.timeouts++
			}
		})
		cnt.Sent += c.Written()
		cnt.Unsent += uint64(c.Unwritten())
		if run.kinds != nil {
			c.Unsent(func(e *conn.Entry) {
				if int(e.Kind) < len(h.kinds) {
					h.kinds[e.Kind].unsent++
				}
			})
		}
	}
	// Requests due but never queued (connections full, dead, or a stop).
	queued := p.next
	scheduled := queued
	for scheduled < p.limit && p.tl.Offset(scheduled) < p.end {
		scheduled++
	}
	cnt.Scheduled = scheduled
	cnt.Unsent += scheduled - queued

	cfg := run.cfg
	windowEnd := p.end
	if windowEnd == math.MaxInt64 {
		windowEnd = 0
	}
	window := max(windowEnd, last-p.t0)
	res := &Result{
		Name:        cfg.Name,
		Mode:        "open",
		TargetRate:  cfg.Rate,
		Arrival:     cfg.Timeline.Name(),
		Pacing:      cfg.Pacing.String(),
		Connections: len(run.conns),
		Counts:      cnt,
		T0:          p.t0,
		Window:      time.Duration(window),
		Response:    run.response.Snapshot(),
		Service:     run.service.Snapshot(),
		Lag:         run.lag.Snapshot(),
		ErrorCodes:  codes,
		FirstError:  firstErr,
		LagLimit:    cfg.LagLimit,
		Interrupted: interrupted,
		Clamped:     run.response.Clamped() + run.service.Clamped() + run.lag.Clamped(),
	}
	if run.kinds != nil {
		tallies := make([][]kindCount, len(run.handlers))
		for i, h := range run.handlers {
			tallies[i] = h.kinds
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
	switch {
	case r.Counts.Scheduled > 0 && sentShare < MinSentFraction:
		return VerdictGeneratorBehind, fmt.Sprintf("only %.2f%% of scheduled requests were sent (below %.1f%%)",
			sentShare*100, MinSentFraction*100)
	case lagP99 > r.LagLimit:
		return VerdictGeneratorBehind, fmt.Sprintf("send lag p99 %.3f ms is above %.3f ms",
			histo.Millis(int64(lagP99)), histo.Millis(int64(r.LagLimit)))
	}
	return VerdictOK, fmt.Sprintf("send lag p99 %.3f ms ≤ %.3f ms, %.2f%% of scheduled sent",
		histo.Millis(int64(lagP99)), histo.Millis(int64(r.LagLimit)), sentShare*100)
}

// runtimeGC collects the set-up garbage (rings, recorders, buffers) before
// a timeline starts, so no collection lands in the measured window.
func runtimeGC() { runtime.GC() }
