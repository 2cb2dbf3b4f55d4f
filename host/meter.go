package host

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
)

// DefaultInterval is the sleep of a hiccup meter that samples as jHiccup
// does by default. Alone in a process on a 2-CPU VM it costs 3–4% of a core
// (see the package doc); 20 ms stays under 1% there, with 20 times fewer
// samples of the same distribution.
const DefaultInterval = time.Millisecond

// MeterConfig configures a Meter. The zero value is a meter that is off.
type MeterConfig struct {
	// Interval is how long the meter's goroutine sleeps between wakes:
	// DefaultInterval to sample like jHiccup; 0 turns the meter off (no
	// goroutine, an empty Result).
	Interval time.Duration
	// Start is the monotonic instant (internal/clock.Now, nanoseconds) the
	// measured window and bucket 0 begin at: wakes before it are slept but
	// not recorded (a warmup). 0 means when Start is called.
	Start int64
	// Bucket is the length of the per-bucket histograms (the run's
	// interval, e.g. one second), at least Interval; 0 keeps no buckets.
	// Closing a bucket packs its histogram on the meter's goroutine, as the
	// scheduler's interval series does (about a quarter of a millisecond
	// of CPU per bucket). Runs leave it 0: their interval series takes the
	// meter's live recorder.
	Bucket time.Duration
}

// Validate reports a configuration NewMeter refuses.
func (c MeterConfig) Validate() error {
	switch {
	case c.Interval < 0:
		return errors.New("hiccup meter: negative interval")
	case c.Bucket < 0:
		return errors.New("hiccup meter: negative bucket length")
	case c.Start < 0:
		return errors.New("hiccup meter: negative start")
	case c.Bucket > 0 && c.Bucket < c.Interval:
		return errors.New("hiccup meter: buckets shorter than the interval")
	}
	return nil
}

// Result is what a Meter recorded.
type Result struct {
	// Total holds every recorded lateness, in nanoseconds, with pacer's
	// histogram geometry: the wakes and the wakes a stall hid.
	Total *hdrhistogram.Histogram
	// Buckets are the per-bucket histograms (nil without a Bucket length):
	// Buckets[k] covers [Start + k·Bucket, Start + (k+1)·Bucket), from
	// bucket 0 to the one Stop was called in, empty ones included. They are
	// packed as the scheduler's intervals are (a decoded histogram is
	// ~300 KB, a packed one a few hundred bytes) and add up to Total.
	Buckets []histo.Packed
	// Interval is the meter's sleep (0: the meter was off).
	Interval time.Duration
	// Start and Bucket are the configuration's, Start filled in when the
	// configuration left it 0.
	Start  int64
	Bucket time.Duration
	// Wakes counts the wakes recorded. Total.TotalCount() − Wakes is the
	// number of wakes that stalls hid.
	Wakes uint64
	// FedWakes counts those of Wakes that Feed brought (the run's own
	// sleeps); the others are the meter's sleeper's.
	FedWakes uint64
	// Err is the first error packing a bucket (nil almost always: packing
	// only encodes in memory). The buckets after it are missing.
	Err error
}

// Meter measures the host's hiccups: how late a goroutine that sleeps a
// fixed interval wakes. Start it before the run, Stop it after; Live may be
// read meanwhile. A Meter is used once.
type Meter struct {
	cfg MeterConfig

	// now and sleepUntil are the clock and the sleep: internal/clock's,
	// or a test's.
	now        func() int64
	sleepUntil func(deadline int64)

	total *histo.Recorder

	startOnce sync.Once
	stopOnce  sync.Once
	stopAt    atomic.Int64 // the instant Stop was called; 0 while running
	from      atomic.Int64 // From's instant: wakes before it are not recorded
	done      chan struct{}
	started   bool
	running   atomic.Bool // started, for Feed on other goroutines
	res       Result

	// mu guards what the samples go into: the meter's goroutine and Feed
	// both record.
	mu      sync.Mutex
	bucket  *hdrhistogram.Histogram // the current bucket's wakes
	cur     int64                   // the current bucket's number
	buckets []histo.Packed
	wakes   uint64
	err     error
	// last is the wake of the last sample taken (recorded or not yet in
	// the window), fed the last one Feed took: a sample is taken at most
	// once per interval, from whichever sleeper woke first.
	last, fed int64
	fedWakes  uint64
}

// standbyIntervals is how many intervals the meter's own goroutine sleeps
// at once while Feed brings it samples: it wakes only to see whether the
// feed has stopped (the run no longer sleeps, or sleeps longer than the
// interval), so at the default interval it wakes 100 times a second
// instead of 1,000.
const standbyIntervals = 10

// NewMeter returns a meter configured by cfg, not yet started.
func NewMeter(cfg MeterConfig) (*Meter, error) {
	return newMeter(cfg, clock.Now, sleepUntil)
}

func newMeter(cfg MeterConfig, now func() int64, sleep func(int64)) (*Meter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Meter{cfg: cfg, now: now, sleepUntil: sleep, done: make(chan struct{})}
	if cfg.Interval > 0 {
		m.total = histo.NewRecorder()
		if cfg.Bucket > 0 {
			m.bucket = histo.New()
		}
	}
	return m, nil
}

// Start starts the meter's goroutine; it does nothing for a meter that is
// off, or after the first call or Stop.
func (m *Meter) Start() { m.StartAt(0) }

// StartAt starts the meter as Start does, with its measured window from
// the instant at instead of the configuration's Start (0 keeps it): for a
// run that learns its start only as it begins.
func (m *Meter) StartAt(at int64) {
	m.startOnce.Do(func() {
		if m.cfg.Interval <= 0 {
			return
		}
		if at > 0 {
			m.cfg.Start = at
		}
		if m.cfg.Start == 0 {
			m.cfg.Start = m.now()
		}
		m.started = true
		m.running.Store(true)
		go m.run()
	})
}

// From moves the start of the measured window to at, while the meter
// runs: wakes before it are slept but not recorded, as before
// MeterConfig.Start. A run starts the meter while it sets itself up, so
// that starting it does not delay the run's first requests, and calls
// From once it knows when its measured window begins.
func (m *Meter) From(at int64) { m.from.Store(at) }

// Live returns the recorder of the total histogram, for live metrics to
// read while the meter runs (as scheduler.Live's recorders); nil for a
// meter that is off.
func (m *Meter) Live() *histo.Recorder { return m.total }

// Stop ends the measured window, waits for the meter's goroutine to finish
// (at most one interval, standbyIntervals while Feed brings samples, or as
// long as a stall in progress lasts) and returns everything recorded.
// Later calls return the same Result.
//
// A sleep still due when Stop is called is not counted; a sleeper stuck
// past its due time counts as late by as much as it was at Stop.
func (m *Meter) Stop() Result {
	m.stopOnce.Do(func() {
		m.startOnce.Do(func() {}) // a Start after Stop does nothing
		m.stopAt.Store(max(m.now(), 1))
		if m.started {
			<-m.done
		}
		m.res = m.result()
	})
	return m.res
}

// run is the meter's goroutine: sleep, record, until Stop. While Feed
// brings samples it sleeps standbyIntervals intervals at a time, and its
// own wake is a sample only when the feed left the last interval without
// one.
func (m *Meter) run() {
	defer close(m.done)
	interval := int64(m.cfg.Interval)
	for {
		from := m.now()
		m.mu.Lock()
		fedRecently := m.fed != 0 && from-m.fed < 2*interval
		m.mu.Unlock()
		due := from + interval
		if fedRecently {
			due = from + standbyIntervals*interval
		}
		m.sleepUntil(due)
		woke := m.now()
		stop := m.stopAt.Load()
		m.mu.Lock()
		if stop != 0 {
			if due < stop && woke-m.last >= interval {
				m.record(min(woke, stop), due)
			}
			m.mu.Unlock()
			return
		}
		if woke-m.last >= interval {
			m.record(woke, due)
		}
		m.mu.Unlock()
	}
}

// Feed offers one of the caller's own timed sleeps as a sample: it was due
// to end at due, and the caller ran again at woke. The meter takes at most
// one sample per interval, from Feed or from its own sleeper, whichever
// woke first, and records it as its own (the wakes a stall hid included,
// at the meter's interval); while Feed brings samples at least once every
// two intervals its own goroutine stands by (see the package doc). Safe
// for concurrent use; a meter that is off, not started or stopped ignores
// it.
func (m *Meter) Feed(due, woke int64) {
	if m == nil || m.total == nil || !m.running.Load() || m.stopAt.Load() != 0 || woke < due {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopAt.Load() != 0 || woke-m.last < int64(m.cfg.Interval) {
		return
	}
	m.fed = woke
	if m.record(woke, due) {
		m.fedWakes++
	}
}

// record adds a wake at woke that was due at due, and the wakes a stall
// hid (see the package doc); it reports whether the wake was in the
// measured window. Call with mu held.
func (m *Meter) record(woke, due int64) bool {
	m.last = woke
	if woke < m.cfg.Start || woke < m.from.Load() {
		return false
	}
	if m.bucket != nil {
		if k := (woke - m.cfg.Start) / int64(m.cfg.Bucket); k > m.cur {
			m.rotate(k)
		}
	}
	m.wakes++
	interval := int64(m.cfg.Interval)
	late := max(woke-due, 0)
	m.add(late, 1)
	missed := late - interval
	if missed > histo.Highest {
		// The hidden wakes above the histograms' range are recorded at
		// Highest, all at once: a suspended machine may miss days.
		n := (missed - histo.Highest + interval - 1) / interval
		m.add(missed, n)
		missed -= n * interval
	}
	for ; missed >= interval; missed -= interval {
		m.add(missed, 1)
	}
	return true
}

// add records n occurrences of one lateness into the total and the current
// bucket. Values above histo.Highest are recorded as Highest (the recorder
// counts them in Clamped).
func (m *Meter) add(late, n int64) {
	m.total.RecordN(late, n)
	if m.bucket != nil {
		_ = m.bucket.RecordValues(min(late, histo.Highest), n) // in range: cannot fail
	}
}

// rotate closes the current bucket and the empty ones before bucket k.
func (m *Meter) rotate(k int64) {
	m.closeBucket()
	for m.cur < k-1 {
		m.cur++
		m.closeBucket()
	}
	m.cur = k
}

// closeBucket packs the current bucket's histogram and empties it.
func (m *Meter) closeBucket() {
	if m.err == nil {
		p, err := histo.Pack(m.bucket)
		if err != nil {
			m.err = err
		} else {
			m.buckets = append(m.buckets, p)
		}
	}
	if m.bucket.TotalCount() > 0 {
		m.bucket.Reset()
	}
}

// result assembles the Result once the goroutine is done (or never ran).
func (m *Meter) result() Result {
	r := Result{Interval: m.cfg.Interval, Start: m.cfg.Start, Bucket: m.cfg.Bucket}
	if m.total == nil {
		return r
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r.Total = m.total.Snapshot()
	r.Wakes, r.FedWakes = m.wakes, m.fedWakes
	if m.bucket != nil && m.started {
		// Close the buckets up to the one Stop was called in (or the last
		// wake's, if that came while Stop was being called).
		stop := m.stopAt.Load()
		if k := (stop - m.cfg.Start) / int64(m.cfg.Bucket); stop >= m.cfg.Start && k > m.cur {
			m.rotate(k)
		}
		if stop >= m.cfg.Start || m.wakes > 0 {
			m.closeBucket()
		}
		r.Buckets = m.buckets
	}
	r.Err = m.err
	return r
}
