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
			if role, err := s.Role(); err != nil || role != "master" {
				continue
			}
			n, err := s.Calls("set")
			if err != nil {
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
