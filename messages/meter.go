package messages

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
)

// Meter records a run's deliveries: the recorders every receiver writes
// into (lock-free, shared), the receivers' own accounting, and the
// interval series. It is told the timeline's start by the publisher
// (Begin) and closed with what was sent (Finish).
type Meter struct {
	// Run is the run's mark in every payload (Header.Run).
	Run uint32
	// Delivery, Service and Receive record the measured first deliveries
	// (ns): from the intended instant, from the queued instant, and the
	// receivers' lateness in reading them.
	Delivery, Service, Receive *histo.Recorder

	interval time.Duration
	warmup   time.Duration
	t0       atomic.Int64 // 0 until Begin
	warmEnd  atomic.Int64 // t0 + warmup

	mu        sync.Mutex // guards receivers and events
	receivers []*Receiver
	events    []Event

	series *series
	// gauges, when set, is read at each interval's end (a stream's lag
	// and pending entries).
	gauges func() Gauges
}

// Gauges are what a stream's consumers stand at, at one instant: entries
// added and not yet delivered (Lag), and those delivered and not yet
// acknowledged (Pending, from XPENDING); -1 where not measured.
type Gauges struct{ Lag, Pending int64 }

// MeterConfig configures a Meter.
type MeterConfig struct {
	// Run marks this run's payloads.
	Run uint32
	// Interval is the series' interval (the publisher's), Warmup the
	// leading part of the timeline whose messages are counted apart.
	Interval, Warmup time.Duration
	// Gauges, when set, is read at each interval's end.
	Gauges func() Gauges
}

// NewMeter returns a Meter for cfg.
func NewMeter(cfg MeterConfig) *Meter {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	return &Meter{Run: cfg.Run, Delivery: histo.NewRecorder(), Service: histo.NewRecorder(), Receive: histo.NewRecorder(),
		interval: cfg.Interval, warmup: max(cfg.Warmup, 0), gauges: cfg.Gauges}
}

// Begin marks the timeline's start t0 (on the clock of internal/clock) and
// starts the interval series: the publisher calls it once, before its
// first message. Deliveries before it (none of this run's can be) count
// as warmup.
func (m *Meter) Begin(t0 int64) {
	m.warmEnd.Store(t0 + int64(m.warmup))
	m.t0.Store(t0)
	m.series = startSeries(m, t0)
}

// Gauges returns a stream's lag and pending entries now ({-1, -1}
// without them). Safe from any goroutine.
func (m *Meter) Gauges() Gauges {
	if m.gauges == nil {
		return Gauges{Lag: -1, Pending: -1}
	}
	return m.gauges()
}

// T0 is the timeline's start (0 before Begin).
func (m *Meter) T0() int64 { return m.t0.Load() }

// Receiver is one subscriber's or consumer's side of the run: its tracks
// (one per channel or stream it listens to, in the order it was given),
// its own latency histogram and counts. Deliver is called from its own
// goroutine only; the counts are read by others.
type Receiver struct {
	m *Meter
	// Name identifies it in the result (subscriber 3, group g1 consumer 2).
	Name string
	// Channels is what it listens to, in words.
	Channels string
	tracks   []Track

	// hist is its own delivery latency, at 2 significant digits (a
	// receiver's histogram costs 25 KB at that precision, against 270 KB
	// at the run's 3).
	hist *hdrhistogram.Histogram
	// Counts, atomic for live views: measured first deliveries,
	// duplicates, stale ones, foreign payloads, warmup deliveries.
	delivered, duplicates, stale, foreign, warm atomic.Uint64
	// stamped counts deliveries whose read carried a kernel timestamp.
	stamped, reads uint64
	clockErrs      uint64
	last           int64
	ended          *Event
}

// Receiver lowest and highest trackable values and digits.
const (
	receiverLowest  = 1000 // 1 µs: below, a receiver's figures say < 1 µs
	receiverSigFigs = 2
)

// NewReceiver adds a receiver of tracks channels (or streams).
func (m *Meter) NewReceiver(name, channels string, tracks int) *Receiver {
	r := &Receiver{m: m, Name: name, Channels: channels, tracks: make([]Track, tracks),
		hist: hdrhistogram.New(receiverLowest, histo.Highest, receiverSigFigs)}
	m.mu.Lock()
	m.receivers = append(m.receivers, r)
	m.mu.Unlock()
	return r
}

// Track returns the receiver's track i.
func (r *Receiver) Track(i int) *Track { return &r.tracks[i] }

// Deliver records a delivery of h, ordinal ord on track tr (the
// receiver's own, or one it shares under a lock: a consumer group's),
// that arrived at t. A payload of another run is counted as foreign and
// nothing else. It returns what the delivery was to its track.
func (r *Receiver) Deliver(tr *Track, ord uint64, h Header, t conn.Times) Outcome {
	if h.Run != r.m.Run {
		r.foreign.Add(1)
		return Stale
	}
	out := tr.Add(ord)
	r.Arrived(out, h, t)
	return out
}

// Arrived records a delivery whose track the caller updated itself (out
// is what Track.Add said).
func (r *Receiver) Arrived(out Outcome, h Header, t conn.Times) {
	r.reads++
	if t.Arrival != t.Read {
		r.stamped++
	}
	r.last = max(r.last, t.Arrival)
	switch out {
	case Duplicate:
		r.duplicates.Add(1)
		return
	case Stale:
		r.stale.Add(1)
		return
	}
	if r.Warm(h) {
		r.warm.Add(1)
		return
	}
	d, s, lag := t.Arrival-h.Intended, t.Arrival-h.Sent, t.Read-t.Arrival
	if t.Arrival <= 0 || d < 0 || s < 0 {
		r.clockErrs++
		d, s = max(d, 0), max(s, 0)
	}
	r.m.Delivery.Record(d)
	r.m.Service.Record(s)
	r.m.Receive.Record(max(lag, 0))
	_ = r.hist.RecordValue(min(max(d, receiverLowest), histo.Highest))
	r.delivered.Add(1)
}

// Delivered returns the measured first deliveries so far. Safe from any
// goroutine.
func (r *Receiver) Delivered() uint64 { return r.delivered.Load() }

// Received returns the first deliveries so far, the warmup's included:
// what to compare with Sent.All. Safe from any goroutine.
func (r *Receiver) Received() uint64 { return r.delivered.Load() + r.warm.Load() }

// Ours reports whether h is of the receiver's run.
func (r *Receiver) Ours(h Header) bool { return h.Run == r.m.Run }

// Warm reports whether h was intended before the measured part of the
// timeline (in the warmup, or before the timeline began).
func (r *Receiver) Warm(h Header) bool {
	return r.m.t0.Load() == 0 || h.Intended < r.m.warmEnd.Load()
}

// Foreign notes a payload pacer did not write (another client's).
func (r *Receiver) Foreign() { r.foreign.Add(1) }

// End records that the receiver stopped receiving before the run ended:
// the server closed its connection (at, on the clock), or it failed with
// why. Only the first end counts.
func (r *Receiver) End(at int64, why string) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.ended != nil {
		return
	}
	e := Event{Receiver: r.Name, What: why, Delivered: r.delivered.Load()}
	if t0 := m.t0.Load(); t0 != 0 {
		e.At = time.Duration(at - t0)
	}
	r.ended = &e
	m.events = append(m.events, e)
}

// Ended reports whether the receiver ended before the run did.
func (r *Receiver) Ended() bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.ended != nil
}

// EndReason words why a receiver's connection ended: the server closed
// it (an end of stream, or a reset: a server that drops a client with
// unread input resets the connection, and a write that meets the reset
// breaks the pipe), or it failed.
func EndReason(err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection"
	case errors.Is(err, syscall.ECONNRESET):
		return "the server closed the connection (reset)"
	case errors.Is(err, syscall.EPIPE):
		// A tracking reader's refetch written after the server dropped
		// it (CLIENT KILL): seen in .ci/run before its read met the end.
		return "the server closed the connection (broken pipe)"
	}
	return "the connection failed: " + err.Error()
}

// Event is something that happened to a receiver: the server
// disconnected it (client-output-buffer-limit pubsub), its connection
// failed. Missed is filled in at the end: what it should have received
// and did not, counted lost.
type Event struct {
	// At is when it happened, from the timeline's start.
	At time.Duration
	// Receiver names it; What says what happened.
	Receiver, What string
	// Delivered is what it had received by then (measured first
	// deliveries), Missed what it lost.
	Delivered, Missed uint64
}

// Totals are a running meter's counts, for live views.
type Totals struct {
	Delivered, Duplicates, Stale, Foreign, Warmup uint64
	// Ended counts receivers that stopped before the run's end.
	Ended int
}

// Totals returns the counts so far. Safe from any goroutine.
func (m *Meter) Totals() Totals {
	m.mu.Lock()
	rs := m.receivers
	ended := len(m.events)
	m.mu.Unlock()
	t := Totals{Ended: ended}
	for _, r := range rs {
		t.Delivered += r.delivered.Load()
		t.Duplicates += r.duplicates.Load()
		t.Stale += r.stale.Load()
		t.Foreign += r.foreign.Load()
		t.Warmup += r.warm.Load()
	}
	return t
}

// now is the clock every instant here is on.
func now() int64 { return clock.Now() }
