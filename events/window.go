package events

import "time"

// Window is how long an event kept a class of requests from being served
// well: from the intended time of the first request that failed, or whose
// response exceeded Bound, because of it, to that of the first that went
// well after the last such one. Its bounds are exact for failures and
// to the tally's slice (about a millisecond) for slow responses.
type Window struct {
	// Start and End are instants on the run's clock (ns).
	Start, End int64
	// Open says nothing went well again before the timeline ended: End
	// is the end of the timeline.
	Open bool
	// Failed counts the requests of the window that failed (errors,
	// lost, timed out, never sent).
	Failed uint64
	// Worst is the slowest response, or the longest wait of a failed
	// request, in the window (ns): the latency spike.
	Worst int64
	// Bound is the response time above which a request counted as not
	// served (ns; 0: only failures counted).
	Bound int64
}

// Unavailable is the window's length.
func (w Window) Unavailable() time.Duration { return time.Duration(w.End - w.Start) }

// WindowOptions say how windows are found.
type WindowOptions struct {
	// Bound is the response time above which a request was not served
	// well (0: only failures count).
	Bound time.Duration
	// Around is how far from an event's first note its first bad request
	// may be intended: requests in flight when a connection dies were
	// intended before it was seen to die. Default DefaultAround.
	Around time.Duration
	// Gap is the longest stretch without a bad request inside one window:
	// an outage that fails one request in three is one window, not many.
	// Default DefaultGap.
	Gap time.Duration
}

// Defaults of WindowOptions: a window starts within a quarter second of
// its event (a connection's failed requests were in flight moments before
// it was seen to die; those of a server that hung longer join through
// the gaps), and a stretch of 20 ms without a bad request ends it. Wider,
// and on a busy machine the stray slow moments around an event joined
// its window: a failover's 0.01 s grew to a second.
const (
	DefaultAround = 250 * time.Millisecond
	DefaultGap    = 20 * time.Millisecond
)

// DefaultBound is the bound of a run without a latency SLO: ten times its
// median response time, at least a millisecond.
func DefaultBound(p50 time.Duration) time.Duration { return max(time.Millisecond, 10*p50) }

// Windows sets each event's write and read windows from t (a nil t leaves
// them unset).
func Windows(evs []Event, t *Tally, o WindowOptions) {
	if t == nil {
		return
	}
	if o.Around <= 0 {
		o.Around = DefaultAround
	}
	if o.Gap <= 0 {
		o.Gap = DefaultGap
	}
	for i := range evs {
		evs[i].Write = t.window(Write, evs[i].At, o)
		evs[i].Read = t.window(Read, evs[i].At, o)
	}
}

// window finds class c's window around the instant at: the bad slice
// nearest to it within Around, widened both ways over bad slices no more
// than Gap apart, and closed by the first good slice after it. When no
// slice near at is bad but requests of the class were served there, the
// window is empty: it starts and ends at at (unavailable 0); nil when the
// class sent nothing near it.
func (t *Tally) window(c int, at int64, o WindowOptions) *Window {
	bound := int64(o.Bound)
	around, gap := int64(o.Around)>>t.shift, max(int64(o.Gap)>>t.shift, 1)
	k := min(max((at-t.t0)>>t.shift, 0), t.n-1)
	seed := int64(-1)
	for d := int64(0); d <= around && seed < 0; d++ {
		for _, i := range [2]int64{k - d, k + d} {
			if i >= 0 && i < t.n && t.at(c, i).bad(bound) {
				seed = i
				break
			}
		}
	}
	if seed < 0 {
		for i := max(k-around, 0); i <= min(k+around, t.n-1); i++ {
			if t.at(c, i).worst >= 0 {
				return &Window{Start: at, End: at, Bound: bound}
			}
		}
		return nil
	}
	lo, hi := seed, seed
	for moved := true; moved; {
		moved = false
		for i := lo - 1; i >= max(lo-gap, 0); i-- {
			if t.at(c, i).bad(bound) {
				lo, moved = i, true
				break
			}
		}
	}
	for moved := true; moved; {
		moved = false
		for i := hi + 1; i <= min(hi+gap, t.n-1); i++ {
			if t.at(c, i).bad(bound) {
				hi, moved = i, true
				break
			}
		}
	}
	w := &Window{Bound: bound}
	first := t.at(c, lo)
	w.Start = t.t0 + lo<<t.shift
	if first.failed > 0 && (bound <= 0 || first.worst <= bound) {
		w.Start = t.t0 + first.first // exact: nothing slow before it in the slice
	}
	last := int64(-1)
	for i := lo; i <= hi; i++ {
		s := t.at(c, i)
		w.Failed += s.failed
		w.Worst = max(w.Worst, s.worst, s.age)
		if s.failed > 0 {
			last = max(last, s.last)
		}
	}
	w.End, w.Open = t.t0+t.span, true
	for i := hi + 1; i < t.n; i++ {
		if t.at(c, i).good(bound) {
			w.End, w.Open = t.t0+i<<t.shift, false
			break
		}
	}
	if last >= 0 {
		w.End = max(w.End, t.t0+last)
	}
	w.Start = min(w.Start, w.End)
	return w
}
