package scheduler

import (
	"slices"
	"sync"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
)

// Series cuts a running test into intervals. A goroutine wakes at the end
// of each interval (T0 + k·D), reads the test's cumulative totals and the
// recorders, and keeps the differences since the last wake, packed (a few
// hundred bytes per histogram). finish adds the last, partial interval from
// the test's final counts and histograms, so the intervals add up to the
// test exactly, whatever was read while the run was moving.
//
//	T0        T0+D       T0+2D      end
//	|--- 0 ----|--- 1 ----|-- last --|
//	  sampled    sampled    finish: final − everything before
//
// With a warmup W, the cutting starts at T0+W (interval k covers
// [W+k·D, W+(k+1)·D) of the timeline); the totals are the measured
// requests' already, and the bytes count from a reading taken at T0+W.
type Series struct {
	d       time.Duration
	t0      int64
	origin  time.Duration // the warmup: the first interval starts at t0+origin
	started time.Time     // wall clock at t0
	totals  func() Totals
	// oldest is the clock instant the oldest unanswered request counts
	// from (0: none), read at each interval's end.
	oldest func() int64
	// recorders of the test (see SeriesRecorders; absent ones nil).
	recs [nSeries]*histo.Recorder
	prev [nSeries]*histo.Delta
	// kinds are the per-command recorders and counters of a timed mix.
	kinds []kindSeries
	// server reads a local server process's counters (nil: not
	// watched); serverAt is the reading at the current interval's start.
	server   func() host.ProcReading
	serverAt host.ProcReading
	// looks reads the intervals as they close (nil: none); scheduled
	// counts what the timeline intended before an offset, schedCum its
	// count at the last interval's end; cut ends the run.
	looks     *Looks
	scheduled func(off int64) uint64
	schedCum  uint64
	cut       func()
	// nodes, when set, returns the run's node recorders (see
	// series_nodes.go); perNode is each one's part.
	nodes   func() []*NodeRecorders
	perNode []*nodeSeries

	// pack packs a histogram: into spill when there is one, else in memory.
	pack func(*histo.Delta) (histo.Packed, error)

	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex // guards what follows, between the goroutine and finish
	out      []Interval
	cum      Totals // sum of out's counts and bytes
	err      error
	finished bool
	// base holds the bytes on the wire when the measured window started
	// (with a warmup); based is set once it was read.
	base  Totals
	based bool
}

// kindSeries is one command's part of a series.
type kindSeries struct {
	ks   *CommandStats
	prev [nSeries]*histo.Delta
	out  []Interval
	cum  Counts
}

// SeriesRecorders are the recorders a series cuts into intervals, in the
// order of nSeries' slots (nil: absent, as a closed loop's send lag).
type SeriesRecorders struct {
	Response, Service, Lag, Receive, Hiccup *histo.Recorder
}

// nSeries is the number of histograms an interval holds: response,
// service, send lag, receive lag and host hiccups.
const nSeries = 5

func (r SeriesRecorders) list() [nSeries]*histo.Recorder {
	return [nSeries]*histo.Recorder{r.Response, r.Service, r.Lag, r.Receive, r.Hiccup}
}

// NewSeries cuts a test that begins at t0, after a warmup of origin,
// into intervals of d: the recorders of recs, the totals and, at each
// interval's end, the age of the oldest unanswered request (from
// oldest). The mix's commands get their own series when ks is timed. It
// runs from begin.
func NewSeries(d time.Duration, origin time.Duration, totals func() Totals, oldest func() int64, recs SeriesRecorders, ks []CommandStats) *Series {
	if d <= 0 {
		d = DefaultInterval
	}
	s := &Series{d: d, origin: max(origin, 0), totals: totals, oldest: oldest, recs: recs.list(),
		stop: make(chan struct{}), done: make(chan struct{}), pack: (*histo.Delta).Pack, based: origin <= 0}
	if sp, err := histo.NewSpill(); err == nil {
		s.pack = sp.PackDelta
	} // else: a temporary directory that cannot be written; keep them in memory
	for i, r := range s.recs {
		if r != nil {
			s.prev[i] = histo.NewDelta(r)
		}
	}
	if Timed(ks) {
		s.kinds = make([]kindSeries, len(ks))
		for i := range ks {
			k := &s.kinds[i]
			k.ks = &ks[i]
			for j, r := range (SeriesRecorders{Response: ks[i].Response, Service: ks[i].Service, Lag: ks[i].Lag, Receive: ks[i].Receive}).list() {
				if r != nil {
					k.prev[j] = histo.NewDelta(r)
				}
			}
		}
	}
	return s
}

// SetServer has the series read a local server process's counters at
// each interval's end (server from HostWatch.ServerReader; nil: none).
// Called before Begin.
func (s *Series) SetServer(server func() host.ProcReading) { s.server = server }

// SetLooks has the series hand its intervals to looks as they close:
// scheduled counts what the timeline intended before an offset, and cut
// ends the run when a look decides. Called before Begin.
func (s *Series) SetLooks(looks *Looks, scheduled func(off int64) uint64, cut func()) {
	s.looks, s.scheduled, s.cut = looks, scheduled, cut
}

// SetNodes has the series cut the response times of the run's nodes
// (nodes returns their recorders as they are now) into intervals of
// their own (see NodeIntervals). Called before Begin.
func (s *Series) SetNodes(nodes func() []*NodeRecorders) { s.nodes = nodes }

// Interval is the length of the series' intervals.
func (s *Series) Interval() time.Duration { return s.d }

// Started is the wall clock at the test's start (set by Begin).
func (s *Series) Started() time.Time { return s.started }

// Begin starts cutting at t0, the start of the test's timeline: the set-up
// above (a spill file, the recorders' deltas) is done before t0 is chosen.
func (s *Series) Begin(t0 int64) {
	s.t0, s.started = t0, time.Now()
	if s.server != nil && s.origin == 0 {
		s.serverAt = s.server()
	}
	go s.loop()
}

func (s *Series) loop() {
	defer close(s.done)
	var closed chan struct{} // an interval closed, for the looks (nil: none)
	if s.looks != nil && s.looks.Look != nil {
		closed = make(chan struct{}, 1)
		lookDone := make(chan struct{})
		go func() {
			defer close(lookDone)
			s.lookLoop(closed)
		}()
		defer func() { <-lookDone }() // a look under way ends first: its decider is read after the run
	}
	t := time.NewTimer(0)
	defer t.Stop()
	from := s.t0 + int64(s.origin)
	if s.origin > 0 {
		t.Reset(time.Duration(from - nanotime()))
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.baseline()
		if s.server != nil {
			s.serverAt = s.server()
		}
		s.mu.Unlock()
	}
	for k := int64(1); ; k++ {
		t.Reset(time.Duration(from + k*int64(s.d) - nanotime()))
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if !s.finished {
			s.take(k, s.measured(s.totals()))
		}
		s.mu.Unlock()
		if closed != nil {
			select {
			case closed <- struct{}{}:
			default: // the looks have one to read already
			}
		}
	}
}

// lookLoop takes the looks (see Looks) on a goroutine of its own, so that
// a look that takes long (a second, in CI under -race) delays no
// interval's end: each interval keeps its length D, where a look on the
// cutting goroutine made the next one hold its own time and the look's.
// It reads the intervals in order as they close, and a look at the end of
// interval k judges the first k, whenever it runs. It returns when the
// series stops, after the look under way.
func (s *Series) lookLoop(closed <-chan struct{}) {
	seen := 0      // the intervals the looks have read
	again := false // the last look asked to be taken again (LookAgain)
	for {
		select {
		case <-s.stop:
			return
		case <-closed:
		}
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			s.mu.Lock()
			if s.finished || seen >= len(s.out) {
				s.mu.Unlock()
				break
			}
			seen++
			planned := s.looks.due(time.Duration(seen) * s.d)
			var look []Interval
			if planned || again {
				look = slices.Clone(s.out[:seen])
			}
			s.mu.Unlock()
			if look == nil {
				continue
			}
			next := s.looks.Look(look, planned)
			if next == LookEnd {
				s.cut() // decided: the run ends
				return
			}
			again = next == LookAgain
		}
	}
}

// baseline reads the bytes on the wire where the measured window starts,
// once; later readings count from it. Called with mu held.
func (s *Series) baseline() {
	if s.based {
		return
	}
	now := s.totals()
	s.base = Totals{BytesSent: now.BytesSent, BytesReceived: now.BytesReceived}
	s.based = true
}

// measured returns t with the bytes counted from the measured window's
// start. Called with mu held.
func (s *Series) measured(t Totals) Totals {
	t.BytesSent -= min(t.BytesSent, s.base.BytesSent)
	t.BytesReceived -= min(t.BytesReceived, s.base.BytesReceived)
	return t
}

// MeasuredBytes returns a test's final totals with the bytes counted from
// the start of the measured window: all of them without a warmup, none
// when the run ended before the window started.
func (s *Series) MeasuredBytes(t Totals) Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.based {
		s.base = Totals{BytesSent: t.BytesSent, BytesReceived: t.BytesReceived}
		s.based = true
	}
	return s.measured(t)
}

// take records interval k−1, which ended at T0 + origin + k·D, from the
// totals now.
func (s *Series) take(k int64, now Totals) {
	start := s.origin + time.Duration(k-1)*s.d
	s.takeAll()
	iv := Interval{Start: start, Duration: s.d, OldestInflight: s.oldestAge(), InFlight: inFlight(now.Counts), ServerProcess: s.serverSince()}
	iv.Counts = sub(now.Counts, s.cum.Counts)
	if s.scheduled != nil {
		// What the timeline intended in the interval, for a look; the
		// result's own counts are spread at the end (finishSeries).
		cum := s.scheduled(int64(s.origin) + k*int64(s.d))
		iv.Counts.Scheduled = cum - min(cum, s.schedCum)
		s.schedCum = cum
	}
	iv.BytesSent = now.BytesSent - min(now.BytesSent, s.cum.BytesSent)
	iv.BytesReceived = now.BytesReceived - min(now.BytesReceived, s.cum.BytesReceived)
	if err := s.packInto(&iv, &s.prev); err != nil && s.err == nil {
		s.err = err
	}
	s.cum.Counts.Add(iv.Counts)
	s.cum.BytesSent += iv.BytesSent
	s.cum.BytesReceived += iv.BytesReceived
	s.out = append(s.out, iv)
	for i := range s.kinds {
		ksr := &s.kinds[i]
		c := Counts{Completed: ksr.ks.Completed.Load(), Errors: ksr.ks.Errors.Load()}
		kiv := Interval{Start: start, Duration: s.d, Counts: commandCounts(sub(c, ksr.cum))}
		if err := s.packInto(&kiv, &ksr.prev); err != nil && s.err == nil {
			s.err = err
		}
		ksr.cum.Add(kiv.Counts)
		ksr.out = append(ksr.out, kiv)
	}
	s.takeNodes(start, s.d)
}

// serverSince is what the server's process did since the last reading
// (nil when it is not watched, or a reading failed: the process ended).
// Called with mu held.
func (s *Series) serverSince() *host.ProcUsage {
	if s.server == nil {
		return nil
	}
	now := s.server()
	if !now.OK() || !s.serverAt.OK() {
		if now.OK() {
			s.serverAt = now
		}
		return nil
	}
	u := now.Since(s.serverAt)
	s.serverAt = now
	return &u
}

// takeAll reads every recorder's difference since the last interval, the
// test's and its commands', at one instant; packInto then encodes them,
// which takes far longer (about a millisecond each).
func (s *Series) takeAll() {
	for _, d := range s.prev {
		if d != nil {
			d.Take()
		}
	}
	for i := range s.kinds {
		for _, d := range s.kinds[i].prev {
			if d != nil {
				d.Take()
			}
		}
	}
}

// packInto encodes the differences takeAll read into iv.
func (s *Series) packInto(iv *Interval, prev *[nSeries]*histo.Delta) error {
	dst := [nSeries]*histo.Packed{&iv.Response, &iv.Service, &iv.Lag, &iv.Receive, &iv.Hiccup}
	for i, d := range prev {
		if d == nil {
			continue
		}
		p, err := s.pack(d)
		if err != nil {
			return err
		}
		*dst[i] = p
	}
	return nil
}

// Finish stops the goroutine and closes the series at end with the test's
// final counts and bytes (and each command's final counts, in kinds'
// order): the last interval holds what the others do not.
func (s *Series) Finish(end int64, total Totals, commands []CommandResult) ([]Interval, [][]Interval, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	// Ends of intervals the goroutine did not get to (a loaded machine
	// can wake it late): take them now, so every interval but the last
	// lasts D. What they missed lands in the first of them.
	if s.origin == 0 || s.based {
		for k := int64(len(s.out)) + 1; s.origin+time.Duration(k)*s.d <= time.Duration(end-s.t0); k++ {
			s.take(k, s.measured(s.totals()))
		}
	}
	start := s.origin + time.Duration(len(s.out))*s.d
	s.takeAll()
	iv := Interval{Start: start, Duration: max(0, time.Duration(end-s.t0)-start), OldestInflight: s.oldestAge(), ServerProcess: s.serverSince()}
	iv.Counts = sub(total.Counts, s.cum.Counts)
	iv.BytesSent = total.BytesSent - min(total.BytesSent, s.cum.BytesSent)
	iv.BytesReceived = total.BytesReceived - min(total.BytesReceived, s.cum.BytesReceived)
	if err := s.packInto(&iv, &s.prev); err != nil && s.err == nil {
		s.err = err
	}
	s.out = append(s.out, iv)
	s.takeNodes(start, iv.Duration)
	var kinds [][]Interval
	if len(s.kinds) > 0 && len(commands) == len(s.kinds) {
		kinds = make([][]Interval, len(s.kinds))
		for i := range s.kinds {
			ksr := &s.kinds[i]
			kiv := Interval{Start: start, Duration: iv.Duration, Counts: sub(commands[i].Counts, ksr.cum)}
			if err := s.packInto(&kiv, &ksr.prev); err != nil && s.err == nil {
				s.err = err
			}
			kinds[i] = append(ksr.out, kiv)
		}
	}
	return s.out, kinds, s.err
}

// inFlight is what cumulative counts leave in flight: written, not yet
// answered nor given up on.
func inFlight(c Counts) uint64 {
	return c.Sent - min(c.Sent, c.Completed+c.Errors+c.Timeouts)
}

// oldestAge is how long the oldest unanswered request has waited now (0:
// none).
func (s *Series) oldestAge() time.Duration {
	if s.oldest == nil {
		return 0
	}
	now := nanotime()
	if t := s.oldest(); t != 0 && t < now {
		return time.Duration(now - t)
	}
	return 0
}

// sub returns a − b field by field, 0 where b is larger (a reading taken
// while the run moved; the last interval restores the exact sum).
func sub(a, b Counts) Counts {
	d := func(x, y uint64) uint64 { return x - min(x, y) }
	return Counts{
		Scheduled: d(a.Scheduled, b.Scheduled), Sent: d(a.Sent, b.Sent), Completed: d(a.Completed, b.Completed),
		Errors: d(a.Errors, b.Errors), Timeouts: d(a.Timeouts, b.Timeouts), Unsent: d(a.Unsent, b.Unsent),
	}
}

// commandCounts fills in a command's Sent and Scheduled the way its
// result does (answered or given up on; plus unsent).
func commandCounts(c Counts) Counts {
	c.Sent = c.Completed + c.Errors + c.Timeouts
	c.Scheduled = c.Sent + c.Unsent
	return c
}
