package ab

import (
	"context"
	"sync"
	"time"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/scheduler"
)

// DuetLead is how far ahead of a duet's shared start both sides are told
// it: time for each to open its connections before its timeline begins
// (a side still dialling when it comes starts late, which its send lag
// shows; the warm-up is sent then, not measured).
const DuetLead = 500 * time.Millisecond

// duet runs both sides' runs of a round at once. Why: on a shared host
// the client's own stalls (a descheduled vCPU, a neighbour's burst) are
// as large as a local server's p99 and come in bursts of seconds; run one
// after the other, each side of a round meets different ones, and the
// round's difference carries them. Run together, on timelines started at
// the same instant with the same arrivals, a stall delays both sides'
// requests of that moment alike, and the difference cancels it (the
// method of duet benchmarking, Bulej et al., ICPE 2020). The price: each
// side's load shares the host with the other's, symmetrically.
//
// A side that fails or is interrupted ends the other's run too (its
// partial result kept, as an interrupted run's).
func duet(ctx context.Context, sides [2]Side, cfg Config, ti int, test experiment.Test, round int) [2]sideRun {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &meeting{}
	var runs [2]sideRun
	var wg sync.WaitGroup
	for s := range sides {
		wg.Go(func() {
			runs[s] = sides[s].run(ctx, cfg, ti, test, round, s, m)
			if !runs[s].ok(ctx) {
				cancel()
			}
		})
	}
	wg.Wait()
	return runs
}

// meeting is where both sides of a duet wait for each other before each
// part they send, and learn its shared start.
type meeting struct {
	mu sync.Mutex
	// first is the channel the first side to arrive waits on (nil: none
	// waits); the second sends it the start.
	first chan time.Time
}

// at waits for the other side and returns the start both were given:
// DuetLead after the later of them arrived. It returns false when ctx
// ends first.
func (m *meeting) at(ctx context.Context) (time.Time, bool) {
	m.mu.Lock()
	if m.first == nil {
		ch := make(chan time.Time, 1)
		m.first = ch
		m.mu.Unlock()
		select {
		case t := <-ch:
			return t, true
		case <-ctx.Done():
			return time.Time{}, false
		}
	}
	ch := m.first
	m.first = nil
	m.mu.Unlock()
	start := time.Now().Add(DuetLead)
	ch <- start // buffered: a first side gone with ctx does not block it
	return start, ctx.Err() == nil
}

// place is env placed at the start both sides meet at (a copy: the
// side's own Env is not changed while both run), without the note of
// the wait; nil when ctx ended first.
func (m *meeting) place(ctx context.Context, env *experiment.Env) *experiment.Env {
	env.ServerProcess() // looked for once, in the side's own Env, before it is copied
	start, ok := m.at(ctx)
	if !ok {
		return nil
	}
	e := *env
	e.Place, e.Quiet = scheduler.NewPlacement(0, 0, start), true
	return &e
}
