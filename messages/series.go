package messages

import (
	"sync"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// Interval is one slice of a run's deliveries, cut where the publisher's
// intervals are (from the timeline's start, after its warmup): a delivery
// belongs to the interval in which it arrived, as a reply does. A run's
// intervals add up to it exactly.
type Interval struct {
	Start, Duration time.Duration
	// Delivered counts the measured first deliveries, Duplicates the
	// repeated ones.
	Delivered, Duplicates uint64
	// Delivery, Service and Receive are the interval's histograms.
	Delivery, Service, Receive histo.Packed
	// Gauges are a stream's lag and pending entries at the interval's end
	// (-1: not measured).
	Gauges Gauges
}

// series cuts a meter's deliveries into intervals: a goroutine wakes at
// each interval's end, takes the recorders' differences and the counts,
// and packs them; finish adds the last, partial one from the totals.
type series struct {
	m      *Meter
	from   int64 // t0 + warmup: where interval 0 starts
	origin time.Duration
	d      time.Duration
	prev   [3]*histo.Delta
	pack   func(*histo.Delta) (histo.Packed, error)
	stop   chan struct{}
	done   chan struct{}

	mu       sync.Mutex
	out      []Interval
	cum      [2]uint64 // delivered and duplicates in out
	err      error
	finished bool
}

func startSeries(m *Meter, t0 int64) *series {
	s := &series{m: m, from: t0 + int64(m.warmup), origin: m.warmup, d: m.interval, stop: make(chan struct{}), done: make(chan struct{}),
		pack: (*histo.Delta).Pack}
	if sp, err := histo.NewSpill(); err == nil {
		s.pack = sp.PackDelta
	}
	for i, r := range []*histo.Recorder{m.Delivery, m.Service, m.Receive} {
		s.prev[i] = histo.NewDelta(r)
	}
	go s.loop()
	return s
}

func (s *series) loop() {
	defer close(s.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for k := int64(1); ; k++ {
		t.Reset(time.Duration(s.from + k*int64(s.d) - now()))
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if !s.finished {
			s.take(s.d)
		}
		s.mu.Unlock()
	}
}

// counts are the measured first deliveries and the duplicates so far.
func (s *series) counts() [2]uint64 {
	t := s.m.Totals()
	return [2]uint64{t.Delivered, t.Duplicates}
}

// take closes the next interval, of length d. Called with mu held.
func (s *series) take(d time.Duration) {
	for _, p := range s.prev {
		p.Take()
	}
	c := s.counts()
	iv := Interval{Start: s.origin + time.Duration(len(s.out))*s.d, Duration: d, Gauges: Gauges{Lag: -1, Pending: -1},
		Delivered: c[0] - min(c[0], s.cum[0]), Duplicates: c[1] - min(c[1], s.cum[1])}
	if s.m.gauges != nil {
		iv.Gauges = s.m.gauges()
	}
	for i, dst := range []*histo.Packed{&iv.Delivery, &iv.Service, &iv.Receive} {
		p, err := s.pack(s.prev[i])
		if err != nil && s.err == nil {
			s.err = err
		}
		*dst = p
	}
	s.cum[0] += iv.Delivered
	s.cum[1] += iv.Duplicates
	s.out = append(s.out, iv)
}

// finish stops the goroutine and closes the series at end: the intervals
// it did not get to, then the last one, which holds the rest.
func (s *series) finish(end int64) ([]Interval, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	for s.from+int64(len(s.out)+1)*int64(s.d) <= end {
		s.take(s.d)
	}
	last := time.Duration(max(0, end-s.from)) - time.Duration(len(s.out))*s.d
	s.take(max(last, 0))
	return s.out, s.err
}
