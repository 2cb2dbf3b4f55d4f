package clock

import "time"

// Every calls f every d on a goroutine of its own (a time.Ticker: late
// ticks are dropped, not queued) until f returns false or stop is called.
// stop waits for a call of f under way to return, so nothing f touches
// is written after it; calling stop more than once panics.
func Every(d time.Duration, f func() bool) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if !f() {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
