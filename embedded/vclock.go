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
// false when the server closed first. It waits on the runtime's timer,
// which parks the goroutine and frees its P. A blocking clock_nanosleep
// for the last 2 ms (clock.SleepUntil), as it used to, kept the P in the
// syscall until the runtime's monitor took it back: with 50 connections
// most Ps sat in such sleeps, and in pacer's own process (--embedded) the
// client's readers waited for one (receive lag p99 2.2 ms at 8k/s against
// 0.19–0.21 ms on the timer; service p50 0.391–0.410 against 0.343–0.365
// ms, and out of process 0.488–0.502 against 0.386–0.414 ms).
func (s *Server) sleepUntil(deadline int64, t **time.Timer) bool {
	left := time.Duration(deadline - clock.Now())
	if left <= 0 {
		return !s.closed.Load()
	}
	if *t == nil {
		*t = time.NewTimer(left)
	} else {
		(*t).Reset(left)
	}
	select {
	case <-(*t).C:
		return !s.closed.Load()
	case <-s.quit:
		(*t).Stop()
		return false
	}
}

// wait returns how long a request arriving at t would wait for stalls
// alone (tests check the schedule with it).
func (s *Server) wait(t int64) time.Duration { return time.Duration(s.afterStall(t) - t) }
