package openloop

import (
	"context"
	"time"

	"github.com/pacer-load/pacer/conn"
)

// Replacing an open run's dead connections while its timeline goes on:
// the pacer retires a dead lane and a bounded number of redials, with
// backoff, bring connections back.

// Redial backoff: a lane waits MinRedialBackoff before its first redial
// and doubles the wait after every dial that fails and every replacement
// that dies without completing a request, up to MaxRedialBackoff. Only a
// replacement that completes a request resets it, so a server that
// accepts and at once closes (or refuses with maxclients) is retried a few
// times a second per lane, not thousands.
const (
	MinRedialBackoff = 10 * time.Millisecond
	MaxRedialBackoff = time.Second
)

// MaxConcurrentRedials bounds the redials of a run in progress at once, as
// conn.DialSome bounds the first dials: 1900 lanes refused by maxclients
// redialed together, each dial holding its buffers, and the run peaked at
// 413 MB (bench/bounds maxclients-100-c2000). The others wait their turn.
const MaxConcurrentRedials = 32

// nextBackoff doubles a redial wait, within [MinRedialBackoff,
// MaxRedialBackoff].
func nextBackoff(d time.Duration) time.Duration {
	return min(max(2*d, MinRedialBackoff), MaxRedialBackoff)
}

// redialed is a replacement connection and the lane's backoff after it;
// with a primary that moves (Config.Follow), the address and epoch it
// was dialed for.
type redialed struct {
	c       *conn.Conn
	backoff time.Duration
	addr    string
	epoch   uint64
}

// redial replaces lane s's connection in the background: it waits the
// lane's backoff, dials, and on failure doubles the wait and tries again,
// until it delivers a connection or the run stops. Called by the pacer
// only; nothing waits for it.
func (run *openRun) redial(s *lane) {
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
			addr, epoch := run.primaryNow(s)
			c, err := run.dial(ctx, s)
			<-run.dialing
			run.handoffMu.Lock()
			switch {
			case err == nil && !run.closed:
				s.next <- redialed{c, wait, addr, epoch} // never blocks: one redial per lane at a time
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
	p.follow()
	for i, s := range run.lanes {
		if s.c != nil && run.cfg.Timeout > 0 {
			if w, ok := s.c.OldestWritten(); ok && now-w > int64(run.cfg.Timeout) {
				s.c.Expire()
			}
		}
		if s.leaving {
			p.leave(i)
			continue
		}
		if s.c != nil && s.c.Dead() && !s.c.Draining() {
			p.retire(i)
		}
		if s.c == nil {
			select {
			case r := <-s.next:
				s.dialing = false
				if p.stale(s, r) {
					continue
				}
				s.backoff, s.completedAt = r.backoff, s.h.completed.Load()
				if run.cl != nil {
					s.h.seq = 0 // before the reader starts
					run.cl.stores[i].reset()
					s.extra.Store(0)
					run.cl.members[s.node].down = false // a joined node that could not be reached is back
				}
				r.c.StartOn(run.cfg.Hub, s.handler())
				s.set(r.c)
				run.reconnects.Add(1)
				if s.lost {
					s.lost = false
					run.noteBack(s)
				}
			default:
				if !s.dialing && run.canRedial() && !p.stop.Load() {
					run.redial(s)
				}
			}
		}
	}
}

// retire closes lane i's dead connection and accounts for what it left.
func (p *pacer) retire(i int) {
	run := p.run
	s := run.lanes[i]
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
	before := run.tally.errors + run.tally.timeouts
	run.account(c, s, nanotime(), &run.tally)
	s.lost = !s.leaving
	run.noteLost(s, c, run.tally.errors+run.tally.timeouts-before)
}

// canRedial reports whether dead connections are replaced.
func (run *openRun) canRedial() bool {
	if run.cl != nil {
		return run.cl.cfg.Dial != nil
	}
	return run.cfg.Redial != nil || run.cfg.RedialGroup != nil
}

// dial opens a replacement for lane s: to its node in a cluster run.
func (run *openRun) dial(ctx context.Context, s *lane) (*conn.Conn, error) {
	switch {
	case run.cl != nil:
		return run.cl.cfg.Dial(ctx, s.addr)
	case s.replica:
		return run.cfg.DialReplica(ctx, s.addr)
	case run.cfg.RedialGroup != nil:
		return run.cfg.RedialGroup(ctx, s.group)
	}
	return run.cfg.Redial(ctx)
}
