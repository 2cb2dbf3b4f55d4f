package embedded

// The virtual execution clock: when a batch finishes, given the stalls and
// the delays drawn for its commands, and the wait until then that Close
// cuts short.

import (
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// afterStall moves t out of a stall window: to its end if t falls inside.
func (s *Server) afterStall(t int64) int64 {
	f := s.cfg.Faults
	if f.Every <= 0 {
		return t
	}
	rel := t - s.start
	k := rel / int64(f.Every)
	if off := rel - k*int64(f.Every); k >= 1 && off < int64(f.Stall) {
		return s.start + k*int64(f.Every) + int64(f.Stall)
	}
	return t
}

// stallsBetween returns the stall windows overlapping [from, to) on the
// clock.Now clock.
func (s *Server) stallsBetween(from, to int64) [][2]int64 {
	f := s.cfg.Faults
	if f.Every <= 0 {
		return nil
	}
	var out [][2]int64
	for k := max(int64(1), (from-s.start)/int64(f.Every)); ; k++ {
		a := s.start + k*int64(f.Every)
		if a >= to {
			return out
		}
		if b := a + int64(f.Stall); b > from {
			out = append(out, [2]int64{a, b})
		}
	}
}

// finish computes when a batch of n commands that arrived at now has been
// executed on the virtual clock, and stores in delays (when it has room)
// the delay drawn for each. Call with s.mu held.
func (s *Server) finish(now int64, n int, delays []int64) int64 {
	f := s.cfg.Faults
	if f.Delay.Kind == DelayNone {
		return s.afterStall(now)
	}
	t := max(now, s.busyUntil)
	for k := range n {
		t = s.afterStall(t)
		d := f.Delay.draw(s.rng.Float64())
		if k < len(delays) {
			delays[k] = d
		}
		t += d
	}
	s.busyUntil = t
	return s.afterStall(t)
}

// sleepUntil waits until deadline on the clock.Now clock, or until Close:
// false when the server closed first. It waits on the server's Waker: a
// connection asleep in clock_nanosleep itself keeps one of the runtime's
// Ps until the runtime takes it back, and a server whose connections all
// waited out their delays so held every P an in-process load generator
// needs to read its replies (pacer's receive lag reached 5 ms at 8k/s
// against --delay exp:100us).
func (s *Server) sleepUntil(deadline int64) bool {
	w := s.waker.Load()
	if w == nil {
		if w = s.startWaker(); w == nil {
			return false
		}
	}
	return w.Wait(deadline, s.quit) && !s.closed.Load()
}

// startWaker starts the server's Waker at its first wait (a server that
// never waits has none to stop); nil once the server closed.
func (s *Server) startWaker() *clock.Waker {
	s.wakerMu.Lock()
	defer s.wakerMu.Unlock()
	if w := s.waker.Load(); w != nil || s.closed.Load() {
		return w
	}
	w := clock.NewWaker()
	s.waker.Store(w)
	return w
}

// stopWaker wakes every connection still waiting (Close).
func (s *Server) stopWaker() {
	s.wakerMu.Lock()
	defer s.wakerMu.Unlock()
	if w := s.waker.Load(); w != nil {
		w.Close()
	}
}

// wait returns how long a request arriving at t would wait for stalls
// alone (tests check the schedule with it).
func (s *Server) wait(t int64) time.Duration { return time.Duration(s.afterStall(t) - t) }
