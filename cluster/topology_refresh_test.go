package cluster

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestRefresherCoalesces: the redirects that come during a fetch cause
// one more fetch, MinRefresh after the first; a redirect after that
// starts a fetch of its own.
func TestRefresherCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Time
		release := make(chan struct{})
		r := &Refresher{Ctx: context.Background()}
		r.Fetch = func() {
			at = append(at, time.Now())
			if len(at) == 1 {
				<-release
			}
		}
		start := time.Now()
		r.Redirected()
		synctest.Wait() // the first fetch is running
		for range 5 {
			r.Redirected()
		}
		close(release)
		r.Wait()
		if len(at) != 2 {
			t.Fatalf("%d fetches for 6 redirects during one fetch, want 2", len(at))
		}
		if gap := at[1].Sub(at[0]); gap != MinRefresh {
			t.Errorf("the second fetch %s after the first, want %s", gap, MinRefresh)
		}
		if d := time.Since(start); d != 2*MinRefresh {
			t.Errorf("done after %s, want %s", d, 2*MinRefresh)
		}
		r.Redirected()
		r.Wait()
		if len(at) != 3 {
			t.Errorf("%d fetches after a later redirect, want 3", len(at))
		}
	})
}
