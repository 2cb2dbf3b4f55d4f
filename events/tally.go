package events

import (
	"sync"
	"sync/atomic"
	"time"
)

// Classes of requests, whose windows are kept apart: a failover stops
// writes while reads from replicas go on.
const (
	Write = 0
	Read  = 1
)

// Buckets of a tally: the timeline is cut into slices of 2^shift ns,
// at least 2^minShift (about a millisecond) and as many as it takes to
// keep at most MaxBuckets of them.
const (
	minShift   = 20
	MaxBuckets = 1 << 17
	chunkSize  = 1024
)

// Tally records, per class and per slice of the timeline (by intended
// time), the slowest response of the requests that completed and the
// first and last of those that failed (an error reply that says the node
// cannot serve, a lost connection, a timeout, a request never sent).
// Completed is the hot path: an atomic load and a compare per request,
// a compare-and-swap only when a slice meets a slower response; nothing
// allocates. Failures are rare and may allocate (a chunk of slices at a
// time). Safe for concurrent use; a nil *Tally records nothing.
type Tally struct {
	t0, span int64
	shift    uint
	n        int64
	// worst[c][i] is 1 + the slowest response (ns) of class c's requests
	// intended in slice i that completed; 0 when none did.
	worst [2][]atomic.Int64
	mu    sync.Mutex
	fails [2][]atomic.Pointer[failChunk]
}

// failChunk holds the failures of chunkSize slices: 1 + the offset of
// the first and last failed request's intended time from t0, how many
// failed, and 1 + the longest any waited before it failed.
type failChunk struct {
	first, last, age [chunkSize]atomic.Int64
	n                [chunkSize]atomic.Uint64
}

// NewTally returns a tally of a timeline that starts at t0 (clock ns) and
// whose intended times lie within span of it.
func NewTally(t0 int64, span time.Duration) *Tally {
	s := max(int64(span), 1)
	shift := uint(minShift)
	for s>>shift >= MaxBuckets {
		shift++
	}
	n := s>>shift + 1
	t := &Tally{t0: t0, span: s, shift: shift, n: n}
	for c := range t.worst {
		t.worst[c] = make([]atomic.Int64, n)
		t.fails[c] = make([]atomic.Pointer[failChunk], (n+chunkSize-1)/chunkSize)
	}
	return t
}

// Slice is the length of the tally's slices of the timeline.
func (t *Tally) Slice() time.Duration { return time.Duration(1) << t.shift }

// index returns the slice of intended, false when outside the tally.
func (t *Tally) index(intended int64) (int64, bool) {
	off := intended - t.t0
	if off < 0 {
		return 0, false
	}
	i := off >> t.shift
	return i, i < t.n
}

// Completed records a request of class c intended at intended that
// completed after response ns.
func (t *Tally) Completed(c int, intended, response int64) {
	if t == nil {
		return
	}
	i, ok := t.index(intended)
	if !ok {
		return
	}
	w := &t.worst[c&1][i]
	v := max(response, 0) + 1
	for {
		cur := w.Load()
		if v <= cur || w.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Failed records a request of class c intended at intended that failed
// after waiting age ns (0 when unknown: never sent).
func (t *Tally) Failed(c int, intended, age int64) {
	if t == nil {
		return
	}
	i, ok := t.index(intended)
	if !ok {
		return
	}
	ch := t.chunk(c&1, i/chunkSize)
	k := i % chunkSize
	off := intended - t.t0 + 1
	lower(&ch.first[k], off)
	raise(&ch.last[k], off)
	raise(&ch.age[k], max(age, 0)+1)
	ch.n[k].Add(1)
}

// chunk returns class c's failure chunk j, making it on first use.
func (t *Tally) chunk(c int, j int64) *failChunk {
	p := &t.fails[c][j]
	if ch := p.Load(); ch != nil {
		return ch
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ch := p.Load(); ch != nil {
		return ch
	}
	ch := &failChunk{}
	p.Store(ch)
	return ch
}

// lower sets *a to v when v is smaller or *a is 0.
func lower(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if cur != 0 && cur <= v || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// raise sets *a to v when v is larger.
func raise(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// slice is what a tally knows of one slice of one class.
type slice struct {
	worst       int64 // slowest completed response, -1 when none completed
	failed      uint64
	first, last int64 // failed requests' intended offsets from t0
	age         int64 // longest wait of a failed one
}

func (t *Tally) at(c int, i int64) slice {
	s := slice{worst: t.worst[c][i].Load() - 1}
	if ch := t.fails[c][i/chunkSize].Load(); ch != nil {
		k := i % chunkSize
		if s.failed = ch.n[k].Load(); s.failed > 0 {
			s.first, s.last, s.age = ch.first[k].Load()-1, ch.last[k].Load()-1, ch.age[k].Load()-1
		}
	}
	return s
}

// bad reports whether the slice saw a failure or a response over bound.
func (s slice) bad(bound int64) bool { return s.failed > 0 || bound > 0 && s.worst > bound }

// good reports whether every request of the slice completed within bound
// (and some did).
func (s slice) good(bound int64) bool {
	return s.failed == 0 && s.worst >= 0 && (bound <= 0 || s.worst <= bound)
}
