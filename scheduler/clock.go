package scheduler

import (
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

func nanotime() int64 { return clock.Now() }

// Now returns the monotonic clock in nanoseconds. Connections that a driver
// times must be dialed with conn.Options.Now = scheduler.Now.
func Now() int64 { return clock.Now() }

// Pacing selects how the open-mode pacer waits for the next intended send.
// The zero value is Precise; the CLI's default is Auto.
type Pacing int

const (
	// Precise sleeps to the exact next due instant with clock_nanosleep,
	// entered as a raw syscall so the pacer's goroutine keeps its P (~50 µs
	// overshoot). It costs a thread wake per due instant: the most CPU at
	// low and middle rates.
	Precise Pacing = iota
	// Coarse wakes at most once per CoarseQuantum and sends everything due
	// at each wake: a fraction of the CPU, about 1 ms of send lag.
	Coarse
	// Auto chooses the wake quantum from the send-lag budget: the lag
	// limit less WakeReserve, left for the wake's own lateness (see
	// Pacing.Quantum).
	Auto
)

// CoarseQuantum is the wake interval of coarse pacing. It is a little under
// a millisecond because on this class of machine a thread that sleeps a
// whole millisecond often wakes 0.3 ms late (the idle vCPU is slow to come
// back); 0.8 ms keeps the send-lag p99 near 1.1 ms.
const CoarseQuantum = 800 * time.Microsecond

// WakeReserve is the part of the send-lag budget auto pacing leaves for
// the wake's own lateness: about the send-lag p99 of precise pacing on a
// busy 2-vCPU VM. The rest of the budget is the quantum.
const WakeReserve = 400 * time.Microsecond

// MinAutoQuantum is the finest quantum auto pacing uses: a precise wake
// is about 60 µs late and costs 40–50 µs of CPU, so a finer quantum would
// save nothing over waking at every due instant. A budget that leaves
// less (a lag limit under 500 µs) gets precise pacing.
const MinAutoQuantum = 100 * time.Microsecond

// Quantum returns the wake quantum of pacing p under the send-lag limit
// lagLimit: the pacer wakes at most once per quantum and sends everything
// due. Zero means a wake at every due instant (precise).
//
//	precise  0
//	coarse   CoarseQuantum
//	auto     lagLimit − WakeReserve rounded down to a microsecond, at
//	         most CoarseQuantum; 0 (precise) below MinAutoQuantum
//
// A wake costs about 50 µs of CPU on this VM whatever it carries (the
// pacing thread's sleep, the reader's wake for the replies), so the CPU
// at 10k req/s follows the quantum: at the default 1 ms budget, 600 µs
// spends about 1.1× coarse's CPU where half the budget (500 µs) spent
// 1.3× and a third (333 µs) 1.5–1.9×.
func (p Pacing) Quantum(lagLimit time.Duration) time.Duration {
	switch p {
	case Coarse:
		return CoarseQuantum
	case Auto:
		q := min(lagLimit-WakeReserve, CoarseQuantum).Truncate(time.Microsecond)
		if q < MinAutoQuantum {
			return 0
		}
		return q
	}
	return 0
}

// String names the pacing as the CLI spells it.
func (p Pacing) String() string {
	switch p {
	case Coarse:
		return "coarse"
	case Auto:
		return "auto"
	}
	return "precise"
}

// ParsePacing reads "auto", "precise" or "coarse".
func ParsePacing(s string) (Pacing, bool) {
	switch s {
	case "precise":
		return Precise, true
	case "coarse":
		return Coarse, true
	case "auto":
		return Auto, true
	}
	return Precise, false
}
