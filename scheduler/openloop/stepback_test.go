package openloop

import (
	"errors"
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
// (precise, coarse) it keeps.
func TestStepBackOnlyFromFinerAutoPacing(t *testing.T) {
	ok := newFakeHost(1).read
	for _, c := range []struct {
		name   string
		pacing scheduler.Pacing
		limit  time.Duration
		read   func() (host.CPUSample, error)
		want   bool
	}{
		{"auto under p99<=2ms", scheduler.Auto, 200 * time.Microsecond, ok, true},
		{"auto at a 300 µs quantum", scheduler.Auto, 700 * time.Microsecond, ok, true},
		{"auto at its default", scheduler.Auto, time.Millisecond, ok, false},
		{"auto coarser than its default", scheduler.Auto, 2 * time.Millisecond, ok, false},
		{"precise", scheduler.Precise, 200 * time.Microsecond, ok, false},
		{"coarse", scheduler.Coarse, 200 * time.Microsecond, ok, false},
		{"no host CPU time", scheduler.Auto, 200 * time.Microsecond, func() (host.CPUSample, error) { return host.CPUSample{}, errors.New("no /proc") }, false},
	} {
		b := newStepBack(Config{Pacing: c.pacing, LagLimit: c.limit}, c.read)
		if got := b != nil; got != c.want {
			t.Errorf("%s: a step-back %v, want %v", c.name, got, c.want)
		}
		if b != nil && b.to != int64(600*time.Microsecond) {
			t.Errorf("%s: steps back to %v, want auto's default 600µs", c.name, time.Duration(b.to))
		}
	}
}

// The decision: a window of two readings with less than StepBackIdleCPUs
// idle steps back, once; one with more does not.
func TestStepBackDecidesOnTheIdleCPU(t *testing.T) {
	f := newFakeHost(0.5) // 1 CPU of 2 idle
	b := newStepBack(Config{Pacing: scheduler.Auto, LagLimit: 200 * time.Microsecond}, f.read)
	b.t0 = clock.Now()
	for range 5 {
		time.Sleep(20 * time.Millisecond)
		if !b.observe() {
			t.Fatal("stepped back with a CPU idle")
		}
	}
	if b.current() != 0 || b.step.Load() != nil {
		t.Fatalf("quantum %d, step %+v: want precise and none", b.current(), b.step.Load())
	}
	f.set(0.1) // 0.2 of a CPU idle
	for range 2 {
		time.Sleep(100 * time.Millisecond)
		if !b.observe() {
			break
		}
	}
	st := b.step.Load()
	if st == nil {
		t.Fatal("no step back with 0.2 of a CPU idle")
	}
	if b.current() != int64(600*time.Microsecond) || st.From != 0 || st.To != 600*time.Microsecond {
		t.Errorf("quantum %v, step from %v to %v: want precise to 600µs", time.Duration(b.current()), st.From, st.To)
	}
	// The window: 20 ms with a CPU idle and 100 ms with 0.2, or 200 ms
	// with 0.2 (0.2–0.37 CPUs idle).
	if st.HostIdleCPUs < 0.15 || st.HostIdleCPUs >= StepBackIdleCPUs || st.HostBusy < 0.6 || st.Self < 0.4 || st.Self > 0.6 {
		t.Errorf("step %+v: want about 0.2–0.4 idle CPUs, a busy host, pacer 0.5 CPUs", st)
	}
	if st.At <= 0 || st.Window <= 0 {
		t.Errorf("step at %v over %v: want both positive", st.At, st.Window)
	}
}

// A run paced finer than auto's default on a host without idle CPU steps
// back during the run: the result says when and why, and from then on the
// pacer wakes at most once per default quantum. On a host with idle CPU it
// keeps its precision.
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
	if res.PacingStep != nil {
		t.Errorf("a host with a CPU idle: stepped back %+v", res.PacingStep)
	}

	res, sleeps := run(0.05)
	st := res.PacingStep
	if st == nil {
		t.Fatal("a host with 0.1 of a CPU idle: no step back")
	}
	// The first decision is two readings (0.2 s) after the start; a
	// loaded machine's ticker may be late, never early.
	if st.At < 150*time.Millisecond || st.At > 800*time.Millisecond {
		t.Errorf("stepped back at %v, want about 0.2 s", st.At)
	}
	if st.From != 0 || st.To != 600*time.Microsecond || st.HostIdleCPUs >= StepBackIdleCPUs {
		t.Errorf("step %+v: want precise to 600µs with under %.1f CPUs idle", st, StepBackIdleCPUs)
	}
	// After the step, wake targets are at least a quantum apart: at most
	// one sleep per 600 µs of what was left of the timeline (a few more
	// for the slices a stop is watched in).
	after := 0
	for _, at := range sleeps {
		if at > res.T0+int64(st.At)+int64(time.Millisecond) {
			after++
		}
	}
	left := duration - st.At
	if most := int(left/(600*time.Microsecond)) + 20; after > most {
		t.Errorf("%d sleeps in the %v after the step, want at most %d (one per 600 µs)", after, left, most)
	}
	t.Logf("step %+v; %d sleeps in all, %d after it", *st, len(sleeps), after)
}
