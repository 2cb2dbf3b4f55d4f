package openloop

import (
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/scheduler"
)

// stepBack lets auto pacing that paces finer than its default quantum (a
// lag limit from a tight --slo: under p99<=2ms, precise, a wake at every
// due instant) step back when the host's CPUs cannot pay for it. It reads
// the host's CPU time every stepBackEvery; when, over the window of its
// last stepBackReadings readings, the CPUs had less than StepBackIdleCPUs of idle time,
// the pacer takes the next rung of its ladder: half the default quantum
// (300 µs), then the default (600 µs), each for the rest of the run unless
// the host is still short after it. The result lists the steps, when and
// why (scheduler.Result.PacingSteps).
//
// Why: a wake at every due instant is the dearest pacing. At 10k/s on a
// 2-vCPU VM it took 0.74 CPUs (two thread wakes per request, the send's
// and the reply's, at 35–40 µs each) against 0.15 for the default 600 µs
// quantum. On a quiet host that is idle CPU nobody wanted. Beside one
// busy loop it is the CPU the server needed: a local redis-server waited
// for a CPU 37% of its time (5% with the default quantum), its service
// p99 went from 0.2 to 3.8 ms, and the send lag the precision was for
// went to 1.5–2.0 ms anyway. The host's idle CPU over 100 ms windows told
// the two apart: 0.56–1.08 CPUs while pacing precisely on the quiet VM,
// 0.00–0.40 beside the busy loop. The middle rung keeps what precision
// the host can pay for: beside one busy loop, a 300 µs quantum left 0.58
// CPUs idle and its gates passed 10 of 10 (send lag p99 0.32–1.46 ms),
// where the 600 µs quantum's passed 8 to 10 of 10 (0.58–1.75 ms).
//
// A step is one way: with a coarser quantum the host has idle time again,
// which says nothing about whether the finer one would fit.
type stepBack struct {
	rungs   []int64      // the quanta, finest first, ns
	rung    int          // the rung in force
	quantum atomic.Int64 // rungs[rung], for the pacer
	// read reads the host's CPU time (host.ReadCPU; tests replace it).
	read func() (host.CPUSample, error)
	t0   int64
	// ring holds the last readings, oldest first; n is how many.
	ring [stepBackReadings]host.CPUSample
	n    int
	// steps are the steps taken; written by observe, read by stop once
	// the watch has ended.
	steps []scheduler.PacingStep
	halt  func()
}

// StepBackIdleCPUs is the least idle CPU time, per wall second, that
// pacing finer than auto's default keeps: below it, auto pacing steps
// back a rung (stepBack).
const StepBackIdleCPUs = 0.4

// stepBackEvery is how often the host's CPU time is read, and
// stepBackReadings how many readings make the window that decides: three,
// two intervals (200 ms), since /proc/stat counts in 10 ms ticks and a
// 100 ms window on two CPUs has only 20.
const (
	stepBackEvery    = 100 * time.Millisecond
	stepBackReadings = 3
)

// newStepBack returns the step-back of a run paced as cfg says, or nil when
// there is nothing to step back from: pacing other than auto (what the
// user chose, they keep), a quantum already the default's or coarser, or
// a host whose CPU time cannot be read.
func newStepBack(cfg Config, read func() (host.CPUSample, error)) *stepBack {
	if cfg.Pacing != scheduler.Auto {
		return nil
	}
	from := cfg.Pacing.Quantum(cfg.LagLimit)
	def := scheduler.Auto.Quantum(scheduler.DefaultLagLimit(scheduler.Auto))
	if from >= def {
		return nil
	}
	if read == nil {
		read = host.ReadCPU
	}
	if _, err := read(); err != nil {
		return nil
	}
	b := &stepBack{rungs: []int64{int64(from)}, read: read}
	if mid := def / 2; from < mid {
		b.rungs = append(b.rungs, int64(mid))
	}
	b.rungs = append(b.rungs, int64(def))
	b.quantum.Store(int64(from))
	return b
}

// start begins watching at the timeline's start t0.
func (b *stepBack) start(t0 int64) {
	if b == nil {
		return
	}
	b.t0 = t0
	b.observe()
	b.halt = clock.Every(stepBackEvery, b.observe)
}

// observe takes a reading and steps back a rung if the window it ends is
// short of idle CPU; it reports whether to go on watching.
func (b *stepBack) observe() bool {
	s, err := b.read()
	if err != nil {
		return false
	}
	if b.n == len(b.ring) {
		copy(b.ring[:], b.ring[1:])
		b.n--
	}
	b.ring[b.n] = s
	b.n++
	if b.n < len(b.ring) {
		return true
	}
	u := host.Usage(b.ring[0], b.ring[b.n-1])
	if !u.Available || u.CPUs == 0 {
		return true
	}
	idle := (1 - u.HostBusy) * float64(u.CPUs)
	if idle >= StepBackIdleCPUs {
		return true
	}
	b.steps = append(b.steps, scheduler.PacingStep{
		At: time.Duration(s.At - b.t0), From: time.Duration(b.rungs[b.rung]), To: time.Duration(b.rungs[b.rung+1]),
		HostIdleCPUs: idle, HostBusy: u.HostBusy, Self: u.Self, Window: time.Duration(s.At - b.ring[0].At),
	})
	b.rung++
	b.quantum.Store(b.rungs[b.rung])
	// The next rung is judged on readings taken at it.
	b.ring[0], b.n = s, 1
	return b.rung < len(b.rungs)-1
}

// current is the quantum in force (ns).
func (b *stepBack) current() int64 { return b.quantum.Load() }

// stop ends the watch and returns the steps taken (none: nil).
func (b *stepBack) stop() []scheduler.PacingStep {
	if b == nil {
		return nil
	}
	if b.halt != nil {
		b.halt()
		b.halt = nil
	}
	return b.steps
}
