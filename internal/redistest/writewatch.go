package redistest

import (
	"sync"
	"time"
)

// WriteWatch samples a primary's SET count every 5 ms while it is a
// primary: once the sentinels make it a replica, the SETs it replicates
// are no writes of pacer's.
type WriteWatch struct {
	mu    sync.Mutex
	last  time.Time
	calls uint64
	quit  chan struct{}
	done  chan struct{}
}

// WatchWrites starts watching s until Stop.
func WatchWrites(s *Server) *WriteWatch {
	w := &WriteWatch{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
			// The role and the count from one INFO: read apart, a primary
			// demoted in between counted the writes it then replicated.
			n, primary, err := s.CallsAsPrimary("set")
			if err != nil || !primary {
				continue
			}
			w.mu.Lock()
			if n > w.calls {
				w.calls, w.last = n, time.Now()
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// Stop ends the watch and returns when the last write was taken and the
// count then.
func (w *WriteWatch) Stop() (time.Time, uint64) {
	close(w.quit)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last, w.calls
}
