package openloop

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// fakeHost is a host of two CPUs whose idle share is set by the test: its
// readings count 100 ticks per CPU-second, as /proc/stat does, of which
// the idle share are idle; pacer's own CPU time is half a CPU.
type fakeHost struct {
	mu        sync.Mutex
	at        int64   // the last reading's instant
	idle, all float64 // ticks so far
	share     float64 // the idle share from now on
	self      time.Duration
	fail      bool
}

func newFakeHost(share float64) *fakeHost {
	return &fakeHost{at: clock.Now(), share: share}
}

func (f *fakeHost) set(share float64) {
	f.mu.Lock()
	f.share = share
	f.mu.Unlock()
}

func (f *fakeHost) read() (host.CPUSample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return host.CPUSample{}, host.ErrUnavailable
	}
	now := clock.Now()
	d := now - f.at
	f.at = now
	ticks := float64(d) / 1e9 * 100 * 2
	f.all += ticks
	f.idle += ticks * f.share
	f.self += time.Duration(d / 2)
	all, idle := uint64(f.all), uint64(f.idle)
	return host.CPUSample{At: now, Host: host.Ticks{User: all - idle, Idle: idle}, CPUs: 2, Self: f.self}, nil
}

// Auto pacing steps back only from a quantum finer than its default, and
// only where the host's CPU time can be read; what the user chose
// (precise, coarse) it keeps. Its ladder runs from its quantum through
// half the default (when finer) to the default.
func TestStepBackOnlyFromFinerAutoPacing(t *testing.T) {
	ok := newFakeHost(1).read
	const us = time.Microsecond
	for _, c := range []struct {
		name   string
		pacing scheduler.Pacing
		limit  time.Duration
		read   func() (host.CPUSample, error)
		rungs  []time.Duration // nil: no step-back
	}{
		{"auto under p99<=2ms", scheduler.Auto, 200 * us, ok, []time.Duration{0, 300 * us, 600 * us}},
		{"auto under p99<=5ms", scheduler.Auto, 500 * us, ok, []time.Duration{100 * us, 300 * us, 600 * us}},
		{"auto at a 300 µs quantum", scheduler.Auto, 700 * us, ok, []time.Duration{300 * us, 600 * us}},
		{"auto at a 400 µs quantum", scheduler.Auto, 800 * us, ok, []time.Duration{400 * us, 600 * us}},
		{"auto at its default", scheduler.Auto, time.Millisecond, ok, nil},
		{"auto coarser than its default", scheduler.Auto, 2 * time.Millisecond, ok, nil},
		{"precise", scheduler.Precise, 200 * us, ok, nil},
		{"coarse", scheduler.Coarse, 200 * us, ok, nil},
		{"no host CPU time", scheduler.Auto, 200 * us, func() (host.CPUSample, error) { return host.CPUSample{}, errors.New("no /proc") }, nil},
	} {
		b := newStepBack(Config{Pacing: c.pacing, LagLimit: c.limit}, c.read)
		var got []time.Duration
		if b != nil {
			for _, q := range b.rungs {
				got = append(got, time.Duration(q))
			}
		}
		if !slices.Equal(got, c.rungs) {
			t.Errorf("%s: rungs %v, want %v", c.name, got, c.rungs)
		}
	}
}

// The decision: a window of two readings with less than StepBackIdleCPUs
// idle steps back a rung; one with more does not. The next rung is judged
// on readings taken at it, and the last rung ends the watch.
func TestStepBackDecidesOnTheIdleCPU(t *testing.T) {
	f := newFakeHost(0.5) // 1 CPU of 2 idle
	b := newStepBack(Config{Pacing: scheduler.Auto, LagLimit: 200 * time.Microsecond}, f.read)
	b.t0 = clock.Now()
	for range 5 {
		time.Sleep(20 * time.Millisecond)
		if !b.observe() {
			t.Fatal("stopped watching with a CPU idle")
		}
	}
	if b.current() != 0 || len(b.steps) != 0 {
		t.Fatalf("quantum %d, steps %+v: want precise and none", b.current(), b.steps)
	}
	f.set(0.1) // 0.2 of a CPU idle
	for len(b.steps) == 0 {
		time.Sleep(100 * time.Millisecond)
		if !b.observe() {
			t.Fatal("stopped watching on the middle rung")
		}
	}
	st := b.steps[0]
	if b.current() != int64(300*time.Microsecond) || st.From != 0 || st.To != 300*time.Microsecond {
		t.Errorf("quantum %v, step from %v to %v: want precise to 300µs", time.Duration(b.current()), st.From, st.To)
	}
	// The window: 20 ms with a CPU idle and 100 ms with 0.2, or 200 ms
	// with 0.2 (0.2–0.37 CPUs idle).
	if st.HostIdleCPUs < 0.15 || st.HostIdleCPUs >= StepBackIdleCPUs || st.HostBusy < 0.6 || st.Self < 0.4 || st.Self > 0.6 {
		t.Errorf("step %+v: want about 0.2–0.4 idle CPUs, a busy host, pacer 0.5 CPUs", st)
	}
	if st.At <= 0 || st.Window <= 0 {
		t.Errorf("step at %v over %v: want both positive", st.At, st.Window)
	}
	// One reading after the step is no window: the next rung waits for
	// two more.
	time.Sleep(100 * time.Millisecond)
	if !b.observe() || len(b.steps) != 1 {
		t.Fatalf("stepped again on one reading at the middle rung: %+v", b.steps)
	}
	time.Sleep(100 * time.Millisecond)
	if b.observe() {
		t.Fatal("still watching on the last rung")
	}
	if len(b.steps) != 2 || b.current() != int64(600*time.Microsecond) || b.steps[1].From != 300*time.Microsecond || b.steps[1].At <= st.At {
		t.Fatalf("quantum %v, steps %+v: want a second step, 300µs to 600µs", time.Duration(b.current()), b.steps)
	}
}

// A run paced finer than auto's default on a host without idle CPU steps
// back during the run: the result says when and why, and from the last
// step on the pacer wakes at most once per default quantum. On a host with
// idle CPU it keeps its precision.
func TestPacerStepsBackOnABusyHost(t *testing.T) {
	const perSecond = 5000
	const duration = time.Second
	rate := timeline.RatePerSecond(perSecond)
	run := func(idle float64) (*scheduler.Result, []int64) {
		cmds, n := drivertest.PingStream(t)
		srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
		var mu sync.Mutex
		var sleeps []int64
		res := runOpen(t, srv.Dial(t, 2, 0), cmds, Config{
			Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: duration, Pacing: scheduler.Auto, LagLimit: 200 * time.Microsecond,
			readCPU: newFakeHost(idle).read,
			beforeSleep: func() {
				mu.Lock()
				sleeps = append(sleeps, clock.Now())
				mu.Unlock()
			},
		})
		if res.Counts.Completed != res.Counts.Scheduled || res.Counts.Scheduled < perSecond*9/10 {
			t.Fatalf("idle %.1f: counts %+v", idle, res.Counts)
		}
		return res, sleeps
	}

	res, _ := run(0.5)
	if len(res.PacingSteps) != 0 {
		t.Errorf("a host with a CPU idle: stepped back %+v", res.PacingSteps)
	}

	res, sleeps := run(0.05)
	steps := res.PacingSteps
	if len(steps) != 2 {
		t.Fatalf("a host with 0.1 of a CPU idle: steps %+v, want two", steps)
	}
	// The decisions are two readings (0.2 s) apart from the start; a
	// loaded machine's ticker may be late, never early.
	first, last := steps[0], steps[1]
	if first.At < 150*time.Millisecond || last.At < first.At+150*time.Millisecond || last.At > 900*time.Millisecond {
		t.Errorf("stepped back at %v and %v, want about 0.2 and 0.4 s", first.At, last.At)
	}
	if first.From != 0 || first.To != 300*time.Microsecond || last.From != 300*time.Microsecond || last.To != 600*time.Microsecond || last.HostIdleCPUs >= StepBackIdleCPUs {
		t.Errorf("steps %+v: want precise to 300µs to 600µs with under %.1f CPUs idle", steps, StepBackIdleCPUs)
	}
	// After the last step, wake targets are at least a quantum apart: at
	// most one sleep per 600 µs of what was left of the timeline (a few
	// more for the slices a stop is watched in).
	after := 0
	for _, at := range sleeps {
		if at > res.T0+int64(last.At)+int64(time.Millisecond) {
			after++
		}
	}
	left := duration - last.At
	if most := int(left/(600*time.Microsecond)) + 20; after > most {
		t.Errorf("%d sleeps in the %v after the last step, want at most %d (one per 600 µs)", after, left, most)
	}
	t.Logf("steps %+v; %d sleeps in all, %d after the last", steps, len(sleeps), after)
}
