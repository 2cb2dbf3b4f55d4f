package openloop

import (
	"slices"

	"github.com/pacer-load/pacer/scheduler"
)

// Following a primary that moves (Config.Follow, a Sentinel's
// failover): once the primary's epoch changes, each live connection is
// moved aside to a lane of its own at the end of the list, where it
// sends nothing more and its requests in flight end as they end (their
// replies, errors or timeouts, counted as any), and a fresh lane takes
// its place and index (its group, its step handler), dialed at once to
// the new primary. The timeline goes on throughout: what is due while
// the fresh lanes dial waits, as any held-back request does.
//
//	lanes: [0 1 2]  ──switch──►  [0' 1' 2' | 0 1 2]
//	                              dialing    leaving: drain, then retire

// primaryNow is the address and epoch a redial of lane s dials: the
// primary's now when it moves, else the lane's own.
func (run *openRun) primaryNow(s *lane) (string, uint64) {
	if f := run.cfg.Follow; f != nil && run.cl == nil && !s.replica {
		return f.Primary()
	}
	return s.addr, s.epoch
}

// follow moves the lanes once the primary moved.
func (p *pacer) follow() {
	run := p.run
	f := run.cfg.Follow
	if f == nil || run.cl != nil {
		return
	}
	addr, epoch := f.Primary()
	if epoch == run.epoch {
		return
	}
	run.epoch = epoch
	n := len(run.lanes) // lanes moved aside are appended: not looked at again
	for i := range n {
		s := run.lanes[i]
		if s.leaving || s.replica || s.epoch >= epoch {
			continue
		}
		if s.c == nil || s.c.Dead() {
			// Its redial dials the new primary; a connection to the
			// former one that it may still deliver is refused (stale).
			if s.c == nil {
				run.label(s, addr, scheduler.RolePrimary)
			}
			s.epoch = epoch
			continue
		}
		p.moveLane(i, addr)
	}
}

// moveLane moves lane i's connection aside (leaving) and puts a fresh
// lane for addr in its place, dialing at once.
func (p *pacer) moveLane(i int, addr string) {
	run := p.run
	old := run.lanes[i]
	fresh := run.newLane(addr, run.epoch)
	fresh.group = old.group
	if old.sw != nil {
		fresh.sw = &stepHandler{}
		fresh.sw.cur.Store(fresh.h)
	}
	old.leaving = true
	old.aside.Store(true)
	if p.isDirty[i] {
		// Bytes the socket refused stay unwritten: they are not sent to
		// the former primary (their requests count as unsent).
		p.isDirty[i] = false
		p.dirty = slices.DeleteFunc(p.dirty, func(j int) bool { return j == i })
	}
	lanes := slices.Clone(run.lanes)
	lanes[i] = fresh
	lanes = append(lanes, old)
	run.lanes = lanes
	shown := lanes
	run.view.Store(&shown)
	p.isDirty = append(p.isDirty, false)
	run.movedAside++
	fresh.backoff = 0 // a move, not a failure: dial now
	run.redial(fresh)
}

// leave looks after leaving lane i: its connection is closed once every
// request it wrote is answered, and retired once its reader has exited
// (or it died: then as a lost one); a connection a redial still delivers
// is closed. The close happens on a goroutine of its own: Close waits for
// the reader, and on a busy machine fifty such waits in a row held the
// timeline back for two seconds.
func (p *pacer) leave(i int) {
	s := p.run.lanes[i]
	if c := s.c; c != nil {
		switch {
		case s.closing:
			select {
			case <-c.Done():
				p.retireQuietly(i)
			default:
			}
		case c.Dead() && !c.Draining():
			p.retire(i)
		case c.InFlight() == c.Unwritten():
			s.closing = true
			go c.Close()
		}
	}
	select {
	case r := <-s.next:
		s.dialing = false
		r.c.Close()
	default:
	}
}

// retireQuietly accounts for leaving lane i's connection, closed with
// nothing unanswered (what was never written is unsent).
func (p *pacer) retireQuietly(i int) {
	run := p.run
	s := run.lanes[i]
	c := s.c
	s.c, s.closing = nil, false
	c.Close() // closed already: returns at once
	run.account(c, s, nanotime(), &run.tally)
}

// stale reports whether redialed r was dialed for a primary that has
// moved since: it is closed and the lane dials again.
func (p *pacer) stale(s *lane, r redialed) bool {
	run := p.run
	if run.cfg.Follow == nil || run.cl != nil || s.replica {
		return false
	}
	if r.epoch < run.epoch {
		r.c.Close()
		s.backoff = 0
		run.redial(s)
		return true
	}
	run.label(s, r.addr, scheduler.RolePrimary)
	s.epoch = r.epoch
	return false
}
