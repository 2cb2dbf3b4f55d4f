package openloop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// StepPlan is one step of RunSteps: its own timeline, measured for
// Duration after a Settle window that is sent but not measured.
//
//	step start                                      drain
//	|-- settle: sent, not measured --|-- measured: Duration --|.....|
//	 requests intended here are       requests intended here are the
//	 excluded from counts, histograms step's result (T0 is this instant)
//	 and intervals
type StepPlan struct {
	// Name labels the step's result.
	Name string
	// Timeline plans the step's sends from the step's start (settle
	// included); Rate is its rate, for the report.
	Timeline timeline.Timeline
	Rate     timeline.Rate
	// Duration is the measured part of the step, after Settle.
	Duration time.Duration
	// Settle is sent first, at the step's rate, and not measured: it is
	// the step's warmup (Config.Warmup), whose requests are left out
	// of the step's counts, histograms and intervals (whenever their
	// replies arrive) and counted in scheduler.Result.WarmupCounts.
	Settle time.Duration
	// Start, when set, is the clock instant (scheduler.Now) where the step's
	// timeline starts (Config.Start): shards running the same sweep
	// start each step together. Zero: when the step is set up.
	Start int64
	// AbortAfter, when set, stops the step early once the oldest
	// unanswered request has waited longer than it since its intended
	// time: the step is then Aborted.
	AbortAfter time.Duration
	// Looks, when set, may end the step before Duration once it can tell
	// (Config.Looks, counted from the end of Settle).
	Looks *scheduler.Looks
}

// abortDrain is how many times AbortAfter an aborted step waits for its
// replies. The requests in flight then have waited at most about
// AbortAfter, so a server that still works answers them well within it,
// and the next step does not start on its leftover queue; a server that
// stopped answering costs the sweep no more than this.
const abortDrain = 10

// Step is the result of one step of RunSteps.
type Step struct {
	*scheduler.Result
	// Index counts the steps from 0; Settle is the step's settle window
	// (the measured part starts Settle after scheduler.Result.T0).
	Index  int
	Settle time.Duration
	// Aborted is set when the step was stopped early because its oldest
	// unanswered request waited longer than AbortAfter; AbortReason says
	// by how much.
	Aborted     bool
	AbortReason string
	// Expired counts the connections that still had requests in flight
	// at the end of the step's drain: they were closed (their requests
	// are the step's timeouts) and dialed again for the next step.
	Expired int
}

// stepHandler is the handler of a connection in a run of steps: it hands
// every reply to the handler of the step under way. A step starts only
// once every kept connection has answered all its requests (or is
// closed), so a reply never crosses from one step into another.
type stepHandler struct {
	cur atomic.Pointer[replies]
	// last is the step handler the reader gave a reply to last, whose
	// pending receive lag a ReadEnded flushes (the reader's alone).
	last *replies
}

func (s *stepHandler) Reply(e *conn.Entry, r conn.Reply, t conn.Times) {
	h := s.cur.Load()
	if h != s.last && s.last != nil {
		s.last.ReadEnded()
	}
	s.last = h
	if h != nil {
		h.Reply(e, r, t)
	}
}

// ReadEnded flushes the pending receive lag of the step that had the last
// reply (conn.ReadEnder).
func (s *stepHandler) ReadEnded() {
	if s.last != nil {
		s.last.ReadEnded()
	}
}

// RunSteps runs consecutive open-model steps over the same
// connections, without reconnecting between them. conns are freshly
// dialed (as for Run; a nil entry is a connection that could not be
// opened) and closed when it returns.
//
// next plans step i from the previous step's result (nil for the first);
// it returns false to stop. cfg holds what the steps share (pacing,
// drains, lag limit, timeout, redial, mix names, intervals, OnStart);
// its Name, Timeline, Rate, Duration, Requests, Warmup and Start are taken
// from each plan. Each step has its own timeline, recorders, counts and interval
// series, and accounts for every request it scheduled (settle excluded).
//
// Between steps, the run waits up to cfg.Drain for the step's replies
// (at most abortDrain × AbortAfter after an aborted step). A connection still
// awaiting replies then is closed, its unanswered requests count as the
// step's timeouts, and it is dialed again with cfg.Redial for the next
// step (Step.Expired counts them); without cfg.Redial its lane stays
// empty. Cancelling ctx ends the current step as an interrupted one and
// no further step starts.
//
// With cfg.Cluster, conns are its pools (PerNode per node, as for
// Run) and each step routes by slot on its own timeline: its result
// holds its own per-node results, and the slot map a step learned (MOVED,
// refreshes) is where the next one starts. Dead and expired connections
// are dialed again to their node with Cluster.Dial (cfg.Redial is unused).
func RunSteps(ctx context.Context, conns []*conn.Conn, cmds scheduler.Commands, cfg Config,
	next func(i int, prev *Step) (StepPlan, bool)) ([]*Step, error) {
	if len(conns) == 0 {
		return nil, errors.New("open run without connections")
	}
	if cfg.Cluster != nil {
		cfg.Redial = nil // the cluster dials its nodes
		if err := cfg.Cluster.validate(len(conns)); err != nil {
			for _, c := range conns {
				if c != nil {
					c.Close()
				}
			}
			return nil, err
		}
	}
	cur := append([]*conn.Conn(nil), conns...)
	sws := make([]*stepHandler, len(cur))
	for i, c := range cur {
		sws[i] = &stepHandler{}
		if c != nil {
			c.StartOn(cfg.Hub, sws[i])
		}
	}
	defer func() {
		for _, c := range cur {
			if c != nil {
				c.Close()
			}
		}
	}()
	var steps []*Step
	var prev *Step
	var cl *clusterRun // the last step's, in a cluster
	epoch := cfg.FollowEpoch
	for i := 0; ctx.Err() == nil; i++ {
		plan, ok := next(i, prev)
		if !ok {
			break
		}
		scfg := cfg
		scfg.Name, scfg.Timeline, scfg.Rate = plan.Name, plan.Timeline, plan.Rate
		scfg.Duration, scfg.Requests, scfg.Warmup = plan.Settle+plan.Duration, 0, plan.Settle
		scfg.Start = plan.Start
		scfg.Looks = plan.Looks
		scfg.FollowEpoch = epoch // where the last step's connections are
		if err := scfg.Validate(); err != nil {
			return steps, err
		}
		if plan.Duration <= 0 || plan.Settle < 0 || plan.AbortAfter < 0 {
			return steps, errors.New("open step with a non-positive duration or a negative settle or abort bound")
		}
		st, stepCl, err := runStep(ctx, cur, sws, cmds, scfg.withDefaults(), plan, cl, &epoch)
		cl = stepCl
		if st != nil {
			st.Index = i
			steps = append(steps, st)
		}
		if err != nil {
			return steps, err
		}
		if st.Interrupted {
			break
		}
		prev = st
	}
	return steps, nil
}

// runStep runs one step over cur (updated in place with the connections
// the next step gets, and sws with their handlers). In a cluster it also
// returns the step's cluster state, whose slot map the next step (prev)
// starts from; following a primary that moves, epoch becomes the move
// the step's connections followed.
func runStep(ctx context.Context, cur []*conn.Conn, sws []*stepHandler, cmds scheduler.Commands, cfg Config, plan StepPlan, prev *clusterRun, epoch *uint64) (*Step, *clusterRun, error) {
	if err := cfg.validateReplicas(len(cur)); err != nil {
		return nil, prev, err
	}
	if err := cfg.validateWait(); err != nil {
		return nil, prev, err
	}
	run := newOpenRun(ctx, cfg)
	defer run.stopRedials()
	run.startConns = len(cur)
	if cfg.Cluster != nil {
		// Each step's own: its per-node results, command stores and wait
		// queues start empty (no request is in flight between steps).
		run.cl = newClusterRun(ctx, cfg.Cluster, len(cur), len(run.kinds))
		defer run.cl.stop()
		run.cl.carry(prev)
	}
	alive := 0
	for i, c := range cur {
		s := run.addStartLane(i, c)
		s.sw = sws[i]
		s.sw.cur.Store(s.h)
		if c != nil {
			s.carried = c
			s.base = connCounts{c.Written(), c.BytesWritten(), c.BytesRead(), c.Unsolicited()}
			if !c.Dead() {
				alive++
			}
		}
	}
	if alive == 0 && !run.canRedial() {
		return nil, run.cl, errors.New("open run without a live connection")
	}

	var stop, aborted atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	var oldestAge atomic.Int64
	endWatch := func() {}
	if plan.AbortAfter > 0 {
		endWatch = watchOldest(run, plan.AbortAfter, &stop, &aborted, &oldestAge)
	}

	p := newPacer(run, cmds, &stop)
	p.onPrepare, p.onStart = run.prepare, run.begin
	p.loop()
	endWatch()
	run.stopRedials()
	allGone := p.allGone()
	interrupted := ctx.Err() != nil
	drain := cfg.Drain
	switch {
	case interrupted:
		drain = min(drain, cfg.InterruptDrain)
	case aborted.Load():
		drain = min(drain, abortDrain*plan.AbortAfter)
	}
	if p.drain(drain, interrupted || aborted.Load()) {
		interrupted = true
	}
	// Keep the connections that answered everything; expire the others,
	// so that finish accounts for their requests as timeouts.
	keep := make([]*conn.Conn, len(run.lanes))
	expired := 0
	for i, s := range run.lanes {
		c := s.c
		switch {
		case c == nil || c.Dead():
		case c.InFlight() > 0:
			c.Expire()
			expired++
		default:
			n := s.counts(c)
			// Nothing is left unwritten: its resends, ASKINGs and WAITs
			// were all written, and are no requests of their own.
			n.written = firstWrites(n.written, s.extra.Load())
			s.extra.Store(0)
			run.moveCounts(c, s, n, &run.tally)
			run.tally.unsolicited += n.unsolicited
			s.c, keep[i] = nil, c
		}
	}
	res, err := run.finish(p, interrupted, allGone)
	if err == nil && p.failure != nil {
		err = p.failure
	}
	if err == nil && res != nil && res.ClockErrors > 0 {
		err = scheduler.ClockError(res.ClockErrors)
	}
	for i := range cur {
		cur[i] = keep[i]
		sws[i] = run.lanes[i].sw // a lane that followed a moved primary has a new one
	}
	*epoch = run.epoch
	// A primary that joined during the step (the cluster scaled out) has
	// its connections after cur's: they end with the step, and the next
	// step joins it again on its first redirect there.
	for _, c := range keep[len(cur):] {
		if c != nil {
			c.Close()
		}
	}
	if res == nil {
		return nil, run.cl, err
	}
	st := &Step{Result: res, Settle: plan.Settle, Expired: expired}
	if aborted.Load() && !interrupted {
		st.Aborted = true
		st.AbortReason = fmt.Sprintf("the oldest unanswered request waited %.3f ms, above the abort bound of %.3f ms",
			histo.Millis(oldestAge.Load()), histo.Millis(int64(plan.AbortAfter)))
	}
	if err == nil && !interrupted && run.canRedial() {
		for i := range cur {
			if cur[i] != nil {
				continue
			}
			c, derr := run.dial(ctx, run.lanes[i]) // to its node in a cluster
			if derr != nil {
				continue // the next step's pacer keeps trying
			}
			c.StartOn(run.cfg.Hub, sws[i])
			cur[i] = c
		}
	}
	return st, run.cl, err
}

// carry starts a step's cluster state from the slot map the previous
// step (prev, nil for the first) ended with: the owners its MOVED replies
// taught it and a refresh it fetched but had not applied yet.
func (cl *clusterRun) carry(prev *clusterRun) {
	if prev == nil {
		return
	}
	// The owners among this step's nodes; a slot that moved to a primary
	// which joined during prev keeps the owner of the first map, whose
	// MOVED makes the primary join this step too.
	for s, k := range prev.owner {
		if int(k) < len(cl.members) {
			cl.owner[s] = k
		}
	}
	if t := prev.fresh.Load(); t != nil {
		cl.apply(t, nil)
	}
}

// watchOldest stops the step (stop and aborted set, age the oldest
// request's wait) once the oldest unanswered request has waited longer
// than limit since its intended time. It looks every limit/10, between
// 1 and 10 ms; the returned function ends the watch.
func watchOldest(run *openRun, limit time.Duration, stop, aborted *atomic.Bool, age *atomic.Int64) func() {
	poll := min(max(limit/10, time.Millisecond), 10*time.Millisecond)
	return clock.Every(poll, func() bool {
		if o := run.oldest(); o != 0 {
			if a := nanotime() - o; a > int64(limit) {
				age.Store(a)
				aborted.Store(true)
				stop.Store(true)
				return false
			}
		}
		return true
	})
}
