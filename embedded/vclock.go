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

// preciseWait is how close to a deadline sleepUntil hands over to
// clock.SleepUntil's precise (and uninterruptible) sleep.
const preciseWait = 2 * time.Millisecond

// sleepUntil waits until deadline on the clock.Now clock, or until Close:
// false when the server closed first. A timer covers all but the last
// preciseWait, so Close wakes it at once.
func (s *Server) sleepUntil(deadline int64, t **time.Timer) bool {
	for {
		left := time.Duration(deadline - clock.Now())
		if left <= preciseWait {
			clock.SleepUntil(deadline)
			return !s.closed.Load()
		}
		if *t == nil {
			*t = time.NewTimer(left - time.Millisecond)
		} else {
			(*t).Reset(left - time.Millisecond)
		}
		select {
		case <-(*t).C:
		case <-s.quit:
			(*t).Stop()
			return false
		}
	}
}

// wait returns how long a request arriving at t would wait for stalls
// alone (tests check the schedule with it).
func (s *Server) wait(t int64) time.Duration { return time.Duration(s.afterStall(t) - t) }
