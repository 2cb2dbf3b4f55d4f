package visibility

import (
	"sync"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// intervals cuts each replica's lags into the run's intervals: at each
// interval's end (t0 + k·d) it takes what each lag recorder got since the
// last, packed; finish adds the last, partial interval, so a replica's
// intervals add up to its lags.
type intervals struct {
	p      *Prober
	t0     int64
	d      time.Duration
	deltas []*histo.Delta
	mu     sync.Mutex
	out    [][]Interval
	taken  int // intervals taken so far
}

func newIntervals(p *Prober, t0 int64) *intervals {
	d := p.cfg.Interval
	if d <= 0 {
		d = time.Second
	}
	s := &intervals{p: p, t0: t0, d: d, out: make([][]Interval, len(p.readers))}
	for _, r := range p.readers {
		s.deltas = append(s.deltas, histo.NewDelta(r.lag))
	}
	return s
}

// loop takes an interval at each of its ends until the prober stops.
func (s *intervals) loop() {
	t := time.NewTimer(0)
	defer t.Stop()
	for k := int64(1); ; k++ {
		t.Reset(time.Duration(s.t0 + k*int64(s.d) - s.p.cfg.Now()))
		select {
		case <-s.p.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.take(time.Duration(k-1)*s.d, s.d)
		s.mu.Unlock()
	}
}

// take records interval [start, start+dur) of each replica. Called with
// mu held.
func (s *intervals) take(start, dur time.Duration) {
	for i, d := range s.deltas {
		d.Take()
		pk, _ := d.Pack() // in memory: it cannot fail
		s.out[i] = append(s.out[i], Interval{Start: start, Duration: dur, Lag: pk})
	}
	s.taken++
}

// finish takes the last interval, up to now, and returns every replica's.
func (s *intervals) finish() [][]Interval {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Duration(s.taken) * s.d
	s.take(start, max(0, time.Duration(s.p.cfg.Now()-s.t0)-start))
	return s.out
}
