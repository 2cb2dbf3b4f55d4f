package timeline

import (
	"math"
	"sync"
)

// TraceOffsets reads the intended offsets of a trace's requests in order
// (pacer replay): request i's offset is its timestamp's distance from the
// trace's first, scaled by the replay's speed, plus the loops before it.
// Next returns false at the end (or on an error, which Err returns).
type TraceOffsets interface {
	Next() (offset int64, ok bool)
	Err() error
	Close() error
}

// Trace is the timeline of a replayed trace: Offset(i) is read from the
// trace itself, request by request, so a trace of any length replays in
// bounded memory. Its cursor moves forward; asking for an earlier request
// than the last few (traceBack) opens the trace again from its start,
// which the pacer never does (it walks the timeline forward) and the
// counting at the end of a run does once per walk.
//
// Offsets must not decrease (the trace reader makes a step back equal to
// the step before). A read error ends the timeline there; Err says it.
//
// Trace is not safe for concurrent use; fork gives each goroutine its own.
type Trace struct {
	open func() (TraceOffsets, error)
	// n is the number of requests (all loops); 0: unknown, read to the
	// end.
	n uint64

	src  TraceOffsets
	next uint64 // index of the request src returns next
	// recent holds the offsets of requests [next−len, next) (a ring).
	recent [traceBack]int64
	end    bool // src is exhausted
	err    *traceErr
}

// traceBack is how many recent offsets a Trace keeps, for the pacer's
// small looks back (none today) without reopening the trace.
const traceBack = 64

// traceErr is a Trace's first error, shared by its forks.
type traceErr struct {
	mu  sync.Mutex
	err error
}

var (
	_ Timeline = (*Trace)(nil)
	_ counter  = (*Trace)(nil)
	_ forker   = (*Trace)(nil)
)

// NewTrace returns the timeline of the trace open reads, n requests long
// (0: as many as it has).
func NewTrace(open func() (TraceOffsets, error), n uint64) *Trace {
	return &Trace{open: open, n: n, err: &traceErr{}}
}

// Name implements Timeline.
func (*Trace) Name() string { return "trace" }

// Err is the first error reading the trace (nil: none).
func (t *Trace) Err() error {
	t.err.mu.Lock()
	defer t.err.mu.Unlock()
	return t.err.err
}

func (t *Trace) fail(err error) {
	t.err.mu.Lock()
	if t.err.err == nil {
		t.err.err = err
	}
	t.err.mu.Unlock()
}

// fork implements forker: a cursor of its own over the same trace.
func (t *Trace) fork() Timeline { return &Trace{open: t.open, n: t.n, err: t.err} }

// Close releases the trace reader the cursor holds.
func (t *Trace) Close() {
	if t.src != nil {
		t.src.Close()
		t.src = nil
	}
}

// rewind reopens the trace at its first request.
func (t *Trace) rewind() bool {
	t.Close()
	t.next, t.end = 0, false
	src, err := t.open()
	if err != nil {
		t.fail(err)
		t.end = true
		return false
	}
	t.src = src
	return true
}

// advance reads the next request's offset into recent.
func (t *Trace) advance() bool {
	if t.end || t.n > 0 && t.next >= t.n {
		t.end = true
		return false
	}
	if t.src == nil && !t.rewind() {
		return false
	}
	off, ok := t.src.Next()
	if !ok {
		if err := t.src.Err(); err != nil {
			t.fail(err)
		}
		t.end = true
		return false
	}
	t.recent[t.next%traceBack] = off
	t.next++
	return true
}

// Offset implements Timeline; past the trace's end it is math.MaxInt64.
func (t *Trace) Offset(i uint64) int64 {
	if i+traceBack < t.next && !t.rewind() { // behind what it holds
		return math.MaxInt64
	}
	for t.next <= i {
		if !t.advance() {
			return math.MaxInt64
		}
	}
	return t.recent[i%traceBack]
}

// countBefore implements counter: the requests with an offset below end,
// at most limit, read forward from the cursor (or from the start when end
// lies before the oldest offset it still holds).
func (t *Trace) countBefore(end int64, limit uint64) uint64 {
	if oldest := t.next - min(t.next, traceBack); oldest > 0 && t.recent[oldest%traceBack] >= end {
		t.rewind() // end lies before what it holds
	}
	// The first request it holds at or past end, else read on.
	for i := t.next - min(t.next, traceBack); i < t.next; i++ {
		if t.recent[i%traceBack] >= end {
			return min(i, limit)
		}
	}
	for t.next < limit && t.advance() {
		if t.recent[(t.next-1)%traceBack] >= end {
			return t.next - 1
		}
	}
	return min(t.next, limit)
}
