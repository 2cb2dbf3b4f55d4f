package cluster

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Refresher decides when a client fetches the slot map again after
// redirects, as redis-benchmark does after MOVED or ASK: one fetch at a
// time, in the background, at most one per MinRefresh, and one more after
// the last redirect seen, until Ctx ends. Fetch does the fetching (and
// whatever the client makes of the new map).
type Refresher struct {
	Ctx   context.Context
	Fetch func()

	refreshing atomic.Bool
	pending    atomic.Bool // a redirect came after the last fetch began
	wg         sync.WaitGroup
}

// Redirected notes a redirect: a fetch starts unless one is running, which
// then fetches once more when it is done.
func (r *Refresher) Redirected() {
	r.pending.Store(true)
	if !r.refreshing.CompareAndSwap(false, true) {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			for r.pending.Swap(false) {
				r.Fetch()
				select {
				case <-r.Ctx.Done():
				case <-time.After(MinRefresh):
				}
			}
			r.refreshing.Store(false)
			// A redirect between the last Swap and here found refreshing
			// set: take it over, unless another goroutine did.
			if !r.pending.Load() || !r.refreshing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// Wait waits for the fetches in progress.
func (r *Refresher) Wait() { r.wg.Wait() }
