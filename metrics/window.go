package metrics

import (
	"sync"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// rateSpan is how far back the achieved rate looks.
const rateSpan = time.Second

// window keeps the recent samples of a counter, taken every tick, so a
// scrape can tell the rate over the last rateSpan however often (or
// rarely) Prometheus scrapes.
type window struct {
	mu      sync.Mutex
	samples []sample // oldest first; older than needed are dropped
}

type sample struct {
	at time.Time
	n  uint64
}

func newWindow(start time.Time, n uint64) *window {
	return &window{samples: []sample{{start, n}}}
}

// add records n at time at and forgets the samples that a rate over
// rateSpan ending now or later no longer needs: all but the newest one at
// least rateSpan old.
func (w *window) add(at time.Time, n uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, sample{at, n})
	keep := 0
	for i, s := range w.samples {
		if at.Sub(s.at) >= rateSpan {
			keep = i
		}
	}
	w.samples = append(w.samples[:0], w.samples[keep:]...)
}

// rate is the counter's rate per second from the newest sample at least
// rateSpan before now (or the first sample, while the window is younger) to
// n at now.
func (w *window) rate(now time.Time, n uint64) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	from := w.samples[0]
	for _, s := range w.samples {
		if now.Sub(s.at) >= rateSpan {
			from = s
		}
	}
	dt := now.Sub(from.at).Seconds()
	if dt <= 0 || n < from.n {
		return 0
	}
	return float64(n-from.n) / dt
}

// sample adds read()'s value every tick until the returned stop is called
// (stop waits for the sampler to finish).
func (w *window) sample(every time.Duration, now func() time.Time, read func() uint64) (stop func()) {
	return clock.Every(every, func() bool {
		w.add(now(), read())
		return true
	})
}
