package openloop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// Config configures an open-model run.
type Config struct {
	// Name labels the result.
	Name string
	// Timeline plans the sends. Required.
	Timeline timeline.Timeline
	// Rate is the timeline's rate, for the report.
	Rate timeline.Rate
	// Duration is the length of the timeline: requests with an offset
	// below it are scheduled. Zero means Requests bounds the run.
	Duration time.Duration
	// Requests bounds the number of requests. Zero means Duration does.
	// With a Shard timeline it bounds the whole timeline: the shard sends
	// its share of the first Requests requests.
	Requests uint64
	// Start, when set, is the clock instant (scheduler.Now) where the timeline
	// starts: its t0, shared by shards started together (--start-at). The
	// run waits for it after setting up (a stop ends the wait); one already
	// past makes the requests due so far a backlog, sent at once with their
	// send lag. Zero: the timeline starts when the run is set up.
	Start int64
	// Pacing chooses how the pacer waits: precise, coarse, or auto (a wake
	// quantum chosen from LagLimit, see scheduler.Pacing.Quantum).
	Pacing scheduler.Pacing
	// Drain is how long to wait for replies after the timeline ends before
	// the rest count as timeouts. Default scheduler.DefaultDrain.
	Drain time.Duration
	// InterruptDrain replaces Drain when the run is interrupted. Default
	// scheduler.DefaultInterruptDrain.
	InterruptDrain time.Duration
	// LagLimit is the send-lag p99 above which the verdict is
	// generator_behind. Default scheduler.DefaultLagLimit(Pacing).
	LagLimit time.Duration
	// OnStart, if set, receives a view of the running test.
	OnStart func(*scheduler.Live)
	// CommandNames names the commands of a mix, by kind; with more than
	// one, the result also holds per-command results.
	CommandNames []string
	// Redial, when set, opens a replacement connection; dead connections
	// are then replaced while the timeline goes on, each lane waiting
	// MinRedialBackoff before its first redial and twice as long after
	// each replacement that dies (or fails to dial) without completing a
	// request, up to MaxRedialBackoff. ctx is cancelled when the run stops:
	// Redial must return promptly then. The run never waits for a dial.
	Redial func(ctx context.Context) (*conn.Conn, error)
	// Timeout, when set, ends a connection whose oldest request has waited
	// longer since its write: its requests become timeouts and it is
	// replaced (with Redial). Zero: no timeout (the default).
	Timeout time.Duration
	// OnErrorReply, if set, sees every error reply's text, from the
	// connections' reader goroutines (concurrently).
	OnErrorReply func(text []byte)
	// OnInteger, if set, sees the value of every measured integer reply
	// (PUBLISH's count of receivers), from the connections' reader
	// goroutines (concurrently).
	OnInteger func(v int64)
	// MaxBacklog bounds how late a request may be sent: one whose intended
	// time is further in the past when its turn comes is counted unsent.
	// Default DefaultMaxBacklog.
	MaxBacklog time.Duration
	// Interval is the length of the result's intervals. Default
	// scheduler.DefaultInterval.
	Interval time.Duration
	// HiccupInterval is the host hiccup meter's sleep
	// (scheduler.Result.Hiccups): 0 is host.DefaultInterval (1 ms, as
	// jHiccup), a negative one turns the meter off.
	HiccupInterval time.Duration
	// ServerProcess, when set, is the target's process on this host
	// (host.FindServer): its threads' scheduler statistics are read at
	// the start, at every interval's end and at the end
	// (scheduler.Result.ServerProcess, scheduler.Interval.ServerProcess). Nil, or pacer's own
	// process: not read.
	ServerProcess *host.ServerProcess
	// Hub reads the connections' replies on its goroutine where they can
	// be read there (conn.StartOn): a process whose other connections a
	// hub reads already (pubsub's subscribers) wakes once per burst for
	// all of them. Nil: each connection has a reader goroutine.
	Hub *conn.Hub
	// Looks, when set, looks at the intervals measured so far while the
	// run goes on and may end it early (see scheduler.Looks); Duration is then the
	// most it lasts.
	Looks *scheduler.Looks
	// Warmup is the leading part of the timeline whose requests are sent
	// but not measured: those intended before it count nowhere in the
	// result's counts, histograms, intervals and per-command results
	// (their own accounting is scheduler.Result.WarmupCounts). The timeline does not
	// restart after it: Duration and Requests bound the whole timeline,
	// warmup included, and the intervals start where it ends. Zero: none.
	Warmup time.Duration
	// Cluster, when set, routes each request to its node's connections
	// (see Cluster); the result then holds per-node results. Redial
	// is unused: Cluster.Dial replaces dead connections.
	Cluster *Cluster
	// Topology is what the run notes and follows of the topology (see
	// Topology): its events, what reads, and a primary that may move.
	Topology

	// Groups, when set, puts connection i in group Groups[i] (a database,
	// a replayed trace's client): a stream that is a Grouper then sends
	// each command on a connection of its group, and RedialGroup replaces
	// a connection of group g (Redial is unused).
	Groups      []int
	RedialGroup func(ctx context.Context, group int) (*conn.Conn, error)

	// beforeSleep, for tests, runs on the pacer's thread before each sleep.
	beforeSleep func()
	// readCPU, for tests, replaces host.ReadCPU for auto pacing's step
	// back (stepBack).
	readCPU func() (host.CPUSample, error)
}

// DefaultMaxBacklog is how late the open loop still sends a request.
const DefaultMaxBacklog = 10 * time.Second

// batchPerConn is how many due commands one connection takes in a wake
// before the next connection takes over. A wake costs a write on each
// connection it queued on, and later a read of their replies: at 1M GET/s
// 256 cost 9-18% less CPU a request than 64 did, and at 100k/s, where a
// wake's commands are fewer than either, it changes nothing. (A cap of
// 16 KiB a connection besides, to spread large values, cost SET of 1 KB
// at 100k/s 15-35% more CPU and no better latency.)
const batchPerConn = 256

// yieldEvery is how often the pacer yields to the scheduler itself.
const yieldEvery = int64(4 * time.Millisecond)

// maxPerWake bounds the commands queued in one wake before they are
// flushed, so a large backlog starts leaving at once.
const maxPerWake = 8192

// Grouper is a command stream whose commands must each go to a group of
// connections (Config.Groups): Group says the group of the command
// Next returns next.
type Grouper interface {
	scheduler.Commands
	Group() int
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Timeline == nil {
		return errors.New("open run without a timeline")
	}
	if c.Duration <= 0 && c.Requests == 0 {
		return errors.New("open run needs a duration or a request count")
	}
	if c.Duration < 0 || c.Drain < 0 || c.LagLimit < 0 || c.Interval < 0 || c.Warmup < 0 {
		return errors.New("negative duration")
	}
	if c.Warmup > 0 && c.Duration > 0 && c.Warmup >= c.Duration {
		return errors.New("the warmup does not end before the timeline does")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Drain == 0 {
		c.Drain = scheduler.DefaultDrain
	}
	if c.InterruptDrain == 0 {
		c.InterruptDrain = scheduler.DefaultInterruptDrain
	}
	if c.LagLimit == 0 {
		c.LagLimit = scheduler.DefaultLagLimit(c.Pacing)
	}
	if c.MaxBacklog <= 0 {
		c.MaxBacklog = DefaultMaxBacklog
	}
	if c.Interval <= 0 {
		c.Interval = scheduler.DefaultInterval
	}
	return c
}

// Run runs one open-model test over conns, freshly dialed with
// conn.Options.Now = scheduler.Now; a nil entry is a connection that could not be
// opened. They are closed when it returns. Commands are sent when the
// timeline says, whatever the replies do; latency counts from the intended
// time. With cfg.Redial set, dead connections (and the nil ones) are
// replaced in the background with bounded backoff while the timeline goes
// on. Cancelling ctx stops the timeline early: the result is then marked
// Interrupted and still accounts for every request.
func Run(ctx context.Context, conns []*conn.Conn, cmds scheduler.Commands, cfg Config) (*scheduler.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(conns) == 0 {
		return nil, errors.New("open run without connections")
	}
	cfg = cfg.withDefaults()
	if cfg.Cluster != nil {
		cfg.Redial = nil // the cluster dials its nodes
		if err := cfg.Cluster.validate(len(conns)); err != nil {
			return nil, err
		}
	}
	if err := cfg.validateReplicas(len(conns)); err != nil {
		return nil, err
	}
	if err := cfg.validateWait(); err != nil {
		return nil, err
	}
	run := newOpenRun(ctx, cfg)
	defer run.stopRedials()
	run.startConns = len(conns)
	if cfg.Cluster != nil {
		run.cl = newClusterRun(ctx, cfg.Cluster, len(conns), len(run.kinds))
		defer run.cl.stop()
	}
	alive := 0
	for i, c := range conns {
		s := run.addStartLane(i, c)
		if c != nil {
			c.StartOn(cfg.Hub, s.h)
			alive++
		}
	}
	if alive == 0 && !run.canRedial() {
		return nil, errors.New("open run without a live connection")
	}

	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()

	p := newPacer(run, cmds, &stop)
	p.onPrepare, p.onStart = run.prepare, run.begin
	p.loop()
	run.stopRedials()
	allGone := p.allGone()
	interrupted := stop.Load()
	drain := cfg.Drain
	if interrupted {
		drain = min(drain, cfg.InterruptDrain)
	}
	if p.drain(drain, interrupted) {
		interrupted = true
	}
	res, err := run.finish(p, interrupted, allGone)
	if err == nil && p.failure != nil {
		err = p.failure
	}
	if err == nil && res != nil && res.ClockErrors > 0 {
		err = scheduler.ClockError(res.ClockErrors)
	}
	return res, err
}

// newOpenRun prepares a run of cfg (with its defaults) without
// connections: addLane adds them. Redials end when the run stops or ctx is
// cancelled, whichever first.
func newOpenRun(ctx context.Context, cfg Config) *openRun {
	run := &openRun{
		cfg:      cfg,
		response: histo.NewRecorder(),
		service:  histo.NewRecorder(),
		lag:      histo.NewRecorder(),
		receive:  histo.NewRecorder(),
		host:     scheduler.NewHostWatch(cfg.HiccupInterval, cfg.ServerProcess),
	}
	run.tally.codes = map[string]uint64{}
	run.epoch = cfg.FollowEpoch
	if cfg.Events {
		run.events = events.NewLog()
	}
	run.wait = newWaitRun(cfg.Wait)
	run.redialCtx, run.stopRedials = context.WithCancel(ctx)
	run.dialing = make(chan struct{}, MaxConcurrentRedials)
	run.kinds = scheduler.NewCommandStats(cfg.CommandNames, true)
	return run
}

// addLane adds a lane holding c (nil: none yet) with its reply
// handler; the caller starts c.
func (run *openRun) addLane(c *conn.Conn) *lane {
	s := run.newLane(run.cfg.Addr, run.cfg.FollowEpoch)
	s.set(c)
	run.lanes = append(run.lanes, s)
	shown := run.lanes
	run.view.Store(&shown)
	return s
}

// newLane makes a lane without a connection, and its reply handler, for
// the server at addr (as of epoch, when it follows a primary that moves).
func (run *openRun) newLane(addr string, epoch uint64) *lane {
	h := &replies{run: run, codes: map[string]uint64{}}
	if run.kinds != nil {
		h.kinds = make([]scheduler.CommandTally, len(run.kinds))
	}
	s := &lane{h: h, next: make(chan redialed, 1), backoff: MinRedialBackoff, epoch: epoch}
	h.lane = s
	run.label(s, addr, scheduler.RolePrimary)
	return s
}

// shown returns the lanes for observers on other goroutines: the pacer
// may add lanes while they look (a cluster node that joins), so they read
// the list as of its last addition, never run.lanes itself.
func (run *openRun) shown() []*lane {
	if v := run.view.Load(); v != nil {
		return *v
	}
	return nil
}

// prepare sets up what watches the run (the interval series, the live
// view it hands OnStart) before the timeline's start is chosen, so that
// none of it delays the first sends: they went out 4–5 ms late, all at
// once, while it ran after t0.
func (run *openRun) prepare() {
	cfg := run.cfg
	run.series = scheduler.NewSeries(cfg.Interval, cfg.Warmup, run.totals, run.oldest,
		scheduler.SeriesRecorders{Response: run.response, Service: run.service, Lag: run.lag, Receive: run.receive, Hiccup: run.host.Recorder()}, run.kinds)
	run.series.SetServer(run.host.ServerReader())
	if cfg.Looks != nil {
		run.series.SetLooks(cfg.Looks, run.scheduledBy, func() { run.cut.Store(max(nanotime()-run.live.T0(), 1)) })
	}
	if run.cl != nil || run.perNode() {
		run.publishNodes()
		run.series.SetNodes(run.nodeRecorders)
	}
	l := &scheduler.Live{Latency: run.response,
		Duration: cfg.Duration, Requests: timeline.RequestLimit(cfg.Timeline, cfg.Requests), Warmup: cfg.Warmup, Stages: timeline.StagesOf(cfg.Timeline),
		Response: run.response, Service: run.service, Lag: run.lag, Receive: run.receive, Hiccups: run.host.Recorder(),
		TargetRate: targetRate(cfg), ServerProcess: run.host.LiveServer()}
	l.Hook(scheduler.LiveHooks{Counts: run.liveCounts, Oldest: run.oldest, Conns: run.connections, Joins: run.joinsSince,
		Nodes: run.liveNodes, Events: run.liveEvents, Commands: scheduler.LiveCommands(cfg.CommandNames, run.kinds, false),
		Totals: func() scheduler.Totals {
			t := run.totals()
			t.Scheduled = run.scheduledBy(nanotime() - l.T0() + 1)
			return t
		}})
	run.live = l
	if cfg.OnStart != nil {
		cfg.OnStart(l)
	}
	run.host.Prepare()
	// Collect the set-up's garbage (rings, recorders, the series' and the
	// observers' buffers) now: a collection its megabytes trigger just
	// after the start held the first sends back 5 ms.
	runtimeGC()
}

// begin marks the timeline's start at t0: the end of the warmup (a step's
// settle window), the interval series' origin and the live view's.
func (run *openRun) begin(t0 int64) {
	if run.cfg.Warmup > 0 {
		run.warmEnd = t0 + int64(run.cfg.Warmup)
	}
	run.live.Begin(t0)
	run.series.Begin(t0)
	run.host.Begin(t0 + int64(run.cfg.Warmup))
	run.beginEvents(t0)
	if run.cfg.Begin != nil {
		run.cfg.Begin(t0)
	}
}

// finish closes the connections and accounts for every request. It never
// waits for a dial: a redial still under way closes what it gets.
func (run *openRun) finish(p *pacer, interrupted, allGone bool) (*scheduler.Result, error) {
	run.handoffMu.Lock()
	run.closed = true
	run.handoffMu.Unlock()
	for _, s := range run.lanes {
		select {
		case r := <-s.next: // dialed too late to be used
			r.c.Close()
		default:
		}
		if s.c != nil {
			s.c.Close()
		}
	}
	end := nanotime()
	t := &run.tally
	for _, s := range run.lanes {
		if s.c != nil {
			run.account(s.c, s, end, t)
		}
	}
	if run.cl != nil {
		run.cl.stop()
		p.abandon()
	}
	var cnt, warm scheduler.Counts
	var stamped, replied uint64
	codes := map[string]uint64{}
	firstErr := ""
	last := int64(0)
	for _, s := range run.lanes {
		h := s.h
		stamped, replied = stamped+h.stamped, replied+h.replied
		cnt.Completed += h.completed.Load()
		cnt.Errors += h.errors.Load()
		warm.Completed += h.warmCompleted.Load()
		warm.Errors += h.warmErrors.Load()
		warm.Sent += s.warmSent.Load()
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
	run.handoffMu.Lock()
	if firstErr == "" && run.dialErr != nil {
		firstErr = run.dialErr.Error()
	}
	run.handoffMu.Unlock()
	// Requests due but never queued (connections full, dead, or a stop),
	// and those dropped for being too late. The warmup's are the first
	// warmN of the timeline. Counted on a cursor of the counts' own, in
	// one forward walk for a trace (whose pacer cursor reads commands).
	queued := p.next
	counting := timeline.Fork(p.tl)
	warmN := uint64(0)
	if p.warmup > 0 {
		warmN = timeline.CountFrom(counting, 0, p.warmup, p.limit)
	}
	scheduled := timeline.CountFrom(counting, max(queued, warmN), p.end, p.limit)
	warmN = min(warmN, scheduled)
	timeline.Close(counting)
	warmNeverQueued := warmN - min(queued, warmN)
	cnt.Scheduled = scheduled - warmN
	cnt.Unsent += scheduled - queued - warmNeverQueued + p.dropped
	warm.Scheduled = warmN
	warm.Errors += t.warm.errors
	warm.Timeouts = t.warm.timeouts
	warm.Unsent = t.warm.unsent + warmNeverQueued + p.warmDropped
	p.noteBlocked(false, end)
	// Still held back at the end: what was never sent waited for the
	// target, and so did what was queued in the last episode.
	heldOpen := p.inEpisode
	p.caughtUp()
	heldUnsent := p.heldDropped
	if heldOpen {
		heldUnsent = cnt.Unsent
	}

	cfg := run.cfg
	windowEnd := p.end
	if windowEnd == math.MaxInt64 {
		windowEnd = 0
	}
	// The measured window starts where the warmup ends.
	window := max(windowEnd, last-p.t0) - min(p.warmup, windowEnd)
	res := &scheduler.Result{
		Name:           cfg.Name,
		Mode:           "open",
		TargetRate:     targetRate(cfg),
		Arrival:        cfg.Timeline.Name(),
		Pacing:         cfg.Pacing.String(),
		PacingQuantum:  cfg.Pacing.Quantum(cfg.LagLimit),
		PacingSteps:    p.stepped,
		Connections:    len(run.lanes) - run.movedAside,
		Counts:         cnt,
		T0:             p.t0,
		FirstWrite:     p.firstWrite,
		Window:         time.Duration(window),
		Response:       run.response.Snapshot(),
		Service:        run.service.Snapshot(),
		Lag:            run.lag.Snapshot(),
		Receive:        run.receive.Snapshot(),
		ReceiveClock:   scheduler.ReceiveClockOf(stamped, replied),
		Stamped:        stamped,
		Replies:        replied,
		ErrorCodes:     scheduler.TrimCodes(codes),
		FirstError:     firstErr,
		LagLimit:       cfg.LagLimit,
		Interrupted:    interrupted,
		Clamped:        run.response.Clamped() + run.service.Clamped() + run.lag.Clamped() + run.receive.Clamped(),
		ConnsLost:      run.connsLost.Load(),
		Reconnects:     run.reconnects.Load(),
		Blocked:        time.Duration(p.blocked),
		HeldSent:       min(p.heldSent, cnt.Sent),
		HeldUnsent:     min(heldUnsent, cnt.Unsent),
		DroppedBacklog: p.dropped,
		Unsolicited:    t.unsolicited,
		ClockErrors:    run.clockErrors.Load(),
		Warmup:         cfg.Warmup,
		WarmupCounts:   warm,
		Stages:         stageList(cfg.Timeline),
	}
	if run.cl != nil {
		res.Nodes = run.nodeResults(p)
	} else if run.perNode() {
		res.Nodes = run.soloResults(cnt)
	}
	run.finishEvents(res)
	res.Wait = run.wait.result()
	if run.kinds != nil {
		tallies := make([][]scheduler.CommandTally, len(run.lanes), len(run.lanes)+1)
		for i, s := range run.lanes {
			tallies[i] = s.h.kinds
		}
		if run.cl != nil {
			tallies = append(tallies, run.cl.kinds)
		}
		res.Commands = scheduler.CommandResults(cfg.CommandNames, run.kinds, tallies)
	}
	run.host.Stop(res)
	run.closeLive(cnt.Scheduled)
	if run.series != nil {
		if err := run.finishSeries(res, p, end); err != nil {
			return res, err
		}
	}
	res.TargetGone = allGone
	if !cnt.Balanced() {
		return res, fmt.Errorf("internal error: counts do not add up: %+v", cnt)
	}
	if !warm.Balanced() || warm.Sent != warm.Completed+warm.Errors+warm.Timeouts {
		return res, fmt.Errorf("internal error: the warmup's counts do not add up: %+v", warm)
	}
	return res, nil
}

// targetRate is the rate of the report: cfg.Rate, or when it is unset
// and the timeline follows stages, their mean over the measured window;
// a shard's is its share of that rate, 1/N of it.
func targetRate(cfg Config) timeline.Rate {
	st := timeline.StagesOf(cfg.Timeline)
	n := timeline.ShardsOf(cfg.Timeline)
	if !cfg.Rate.IsZero() || st == nil {
		if n > 1 {
			return timeline.RatePerSecond(cfg.Rate.PerSecond() / float64(n))
		}
		return cfg.Rate
	}
	end := int64(st.Duration())
	if cfg.Duration > 0 {
		end = min(end, int64(cfg.Duration))
	}
	return timeline.RatePerSecond(st.Mean(int64(cfg.Warmup), end) / float64(n))
}

// stageList is the stages tl follows, nil for a constant rate.
func stageList(tl timeline.Timeline) []timeline.Stage {
	if st := timeline.StagesOf(tl); st != nil {
		return st.List()
	}
	return nil
}

// finishSeries closes the interval series at end and spreads the scheduled
// requests over the intervals by their intended times.
func (run *openRun) finishSeries(res *scheduler.Result, p *pacer, end int64) error {
	total := scheduler.Totals{Counts: res.Counts}
	for _, s := range run.lanes {
		total.BytesSent += s.bytesOut.Load()
		total.BytesReceived += s.bytesIn.Load()
	}
	total = run.series.MeasuredBytes(total)
	res.BytesSent, res.BytesReceived = total.BytesSent, total.BytesReceived
	ivs, kinds, err := run.series.Finish(end, total, res.Commands)
	if err != nil {
		return err
	}
	for k, nivs := range run.series.NodeIntervals() {
		if k < len(res.Nodes) {
			res.Nodes[k].Intervals = nivs
		}
	}
	// Scheduled: the requests intended within each interval, the last
	// holding the rest (the timeline's end may have moved with a stop).
	// The intervals' bounds increase: one forward walk counts them all.
	counting := timeline.Fork(p.tl)
	defer timeline.Close(counting)
	var sum, before uint64
	for k := range ivs[:len(ivs)-1] {
		iv := &ivs[k]
		if k == 0 {
			before = timeline.CountFrom(counting, 0, min(int64(iv.Start), p.end), p.limit)
		}
		upTo := timeline.CountFrom(counting, before, min(int64(iv.Start+iv.Duration), p.end), p.limit)
		iv.Counts.Scheduled = upTo - before
		sum += iv.Counts.Scheduled
		before = upTo
	}
	ivs[len(ivs)-1].Counts.Scheduled = res.Counts.Scheduled - min(sum, res.Counts.Scheduled)
	res.Interval, res.Intervals, res.Started = run.cfg.Interval, ivs, run.series.Started()
	res.ServerProcess = run.host.ServerTotal(ivs)
	for i := range kinds {
		res.Commands[i].Intervals = kinds[i]
	}
	return nil
}

// connections counts the live connections, for observers.
func (run *openRun) connections() scheduler.Connections {
	shown := run.shown()
	c := scheduler.Connections{Lost: run.connsLost.Load(), Reconnects: run.reconnects.Load()}
	for _, s := range shown {
		if s.aside.Load() {
			continue // left with a former primary
		}
		c.Of++
		if k := s.conn(); k != nil && !k.Dead() {
			c.Open++
		}
	}
	return c
}

// runtimeGC collects the set-up garbage (rings, recorders, buffers) before
// a timeline starts, so no collection lands in the measured window.
func runtimeGC() { runtime.GC() }
