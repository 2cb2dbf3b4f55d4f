package clock

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A Waker wakes goroutines at precise instants while holding at most two
// of the runtime's processors. A goroutine that sleeps in a blocking
// clock_nanosleep (SleepUntil) wakes to the microsecond but keeps its P
// until the runtime's monitor takes it back (20 µs to 10 ms later), so a
// server with fifty connections each sleeping so holds every P the rest
// of the process (an in-process load generator) needs; the runtime's own
// timers release the P but fire on the netpoller's whole-millisecond
// waits when the process is idle. A Waker parks its waiters on channels,
// and one goroutine sleeps for them all in a blocking read of a kernel
// timer (a timerfd) set for the earliest of their deadlines, then wakes
// those that are due and yields its P to them. Where there is no timerfd,
// it falls back to the runtime's timers.
type Waker struct {
	mu      sync.Mutex
	waiters waiterHeap
	timer   kernelTimer // nil: closed, or no timerfd (wait on the runtime's timers)
	armed   int64       // the deadline timer is set for; 0: none
	closed  bool
	// sleeping is set while a wait sleeps in SleepUntil itself (Wait).
	sleeping atomic.Bool
}

// PreciseWait is the longest wait that may sleep in SleepUntil itself.
const PreciseWait = 2 * time.Millisecond

type waiter struct {
	at int64
	// wake gets one token when the wait is over (buffered: the loop never
	// blocks on it); a wait that took its token gives the channel back to
	// wakePool, one that was cancelled leaves it to the collector.
	wake chan struct{}
}

// wakePool holds the wake channels of finished waits: a wait parks on one
// without allocating (the embedded target waits once per delayed reply).
var wakePool = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

// waiterHeap is a min-heap of waiters by deadline, typed so that pushing
// does not box a waiter into an interface (container/heap would).
type waiterHeap []waiter

func (h *waiterHeap) push(x waiter) {
	*h = append(*h, x)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if q[parent].at <= q[i].at {
			break
		}
		q[parent], q[i] = q[i], q[parent]
		i = parent
	}
}

func (h *waiterHeap) pop() waiter {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q[l].at < q[least].at {
			least = l
		}
		if r < len(q) && q[r].at < q[least].at {
			least = r
		}
		if least == i {
			break
		}
		q[i], q[least] = q[least], q[i]
		i = least
	}
	*h = q
	return top
}

// kernelTimer is a kernel timer a thread can sleep on: set arms it for
// an instant on the Now clock (in the past: it fires at once), wait
// blocks the calling thread until it fires.
type kernelTimer interface {
	set(at int64) error
	wait() error
	close() error
}

// NewWaker starts a Waker; Close stops it.
func NewWaker() *Waker {
	w := &Waker{}
	if t, err := newKernelTimer(); err == nil {
		w.timer = t
		go w.loop(t)
	}
	return w
}

// Wait blocks until the Now clock reaches deadline (true), or until
// cancel is closed or the Waker is closed (false).
//
// One wait at a time whose deadline is within PreciseWait sleeps in
// SleepUntil itself, which Close and cancel cannot cut short: at low
// rates almost every wait is that one, and wakes as precisely as its own
// thread can (the hand-over from the Waker's thread costs tens of
// microseconds in a busy process); it holds one more P while it sleeps.
func (w *Waker) Wait(deadline int64, cancel <-chan struct{}) bool {
	now := Now()
	if deadline <= now {
		return true
	}
	if deadline-now <= int64(PreciseWait) && w.sleeping.CompareAndSwap(false, true) {
		SleepUntil(deadline)
		w.sleeping.Store(false)
		return !w.isClosed()
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	if w.timer == nil {
		w.mu.Unlock()
		return sleepOrCancel(deadline, cancel)
	}
	wake := wakePool.Get().(chan struct{})
	w.waiters.push(waiter{at: deadline, wake: wake})
	if w.armed == 0 || deadline < w.armed {
		w.arm(deadline)
	}
	w.mu.Unlock()
	select {
	case <-wake:
		wakePool.Put(wake)
	case <-cancel:
		return false // the loop signals wake when its time comes
	}
	if w.isClosed() {
		return false
	}
	if deadline > Now() { // the timer failed and woke everyone early
		return sleepOrCancel(deadline, cancel)
	}
	return true
}

// sleepOrCancel waits on the runtime's timers.
func sleepOrCancel(deadline int64, cancel <-chan struct{}) bool {
	t := time.NewTimer(time.Duration(deadline - Now()))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-cancel:
		return false
	}
}

// arm sets the kernel timer for at. Call with mu held.
func (w *Waker) arm(at int64) {
	if err := w.timer.set(at); err != nil {
		// The timer is unusable: wake everyone now and let them fall
		// back to the runtime's timers from here on (the loop, waiting
		// on it forever, stays: a thread and a descriptor).
		w.wakeAll()
		w.timer = nil
		return
	}
	w.armed = at
}

// loop wakes the waiters whose deadlines passed each time the timer
// fires, on a thread of its own; once the Waker closed it releases the
// timer.
func (w *Waker) loop(t kernelTimer) {
	for {
		err := t.wait()
		w.mu.Lock()
		if err != nil || w.closed || w.timer == nil {
			w.wakeAll()
			w.timer = nil
			w.mu.Unlock()
			_ = t.close()
			return
		}
		now := Now()
		woke := false
		for len(w.waiters) > 0 && w.waiters[0].at <= now {
			w.waiters.pop().wake <- struct{}{}
			woke = true
		}
		w.armed = 0
		if len(w.waiters) > 0 {
			w.arm(w.waiters[0].at)
		}
		w.mu.Unlock()
		if woke {
			// The woken wait in this P's run queue: run them here and
			// now rather than after another thread woke to take them.
			runtime.Gosched()
		}
	}
}

// wakeAll wakes every waiter. Call with mu held.
func (w *Waker) wakeAll() {
	for _, x := range w.waiters {
		x.wake <- struct{}{}
	}
	w.waiters = nil
	w.armed = 0
}

func (w *Waker) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// Close wakes every waiter (their Wait returns false) and releases the
// kernel timer. Waits after Close return false at once.
func (w *Waker) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	w.wakeAll()
	if w.timer != nil {
		// Closing the descriptor would not wake the thread reading it:
		// the timer fires now, and the loop sees the Waker closed and
		// releases it.
		_ = w.timer.set(1)
	}
}
