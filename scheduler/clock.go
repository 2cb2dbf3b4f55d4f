package scheduler

import (
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

func nanotime() int64 { return clock.Now() }

// Now returns the monotonic clock in nanoseconds. Connections that a driver
// times must be dialed with conn.Options.Now = scheduler.Now.
func Now() int64 { return clock.Now() }

const havePreciseSleep = clock.HavePrecise

func preciseSleepUntil(deadline int64) { clock.RawSleepUntil(deadline) }

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
	// Auto chooses the wake quantum from the send-lag budget: half the lag
	// limit (see Pacing.Quantum), so the quantum itself uses half of the
	// budget and the rest is left for the wake's own lateness.
	Auto
)

// CoarseQuantum is the wake interval of coarse pacing. It is a little under
// a millisecond because on this class of machine a thread that sleeps a
// whole millisecond often wakes 0.3 ms late (the idle vCPU is slow to come
// back); 0.8 ms keeps the send-lag p99 near 1.1 ms.
const CoarseQuantum = 800 * time.Microsecond

// MinAutoQuantum is the finest quantum auto pacing uses. A precise wake
// is about 60 µs late and costs about 40–50 µs of CPU: a finer quantum
// would save little over waking at every due instant, and would leave
// too little of a tight budget for the wake's own lateness. A budget whose
// half is below it (a lag limit under 300 µs) gets precise pacing.
const MinAutoQuantum = 150 * time.Microsecond

// Quantum returns the wake quantum of pacing p under the send-lag limit
// lagLimit: the pacer wakes at most once per quantum and sends everything
// due. Zero means a wake at every due instant (precise).
//
//	precise  0
//	coarse   CoarseQuantum
//	auto     lagLimit/2 rounded down to a microsecond, at most
//	         CoarseQuantum; 0 (precise) when that is below MinAutoQuantum
func (p Pacing) Quantum(lagLimit time.Duration) time.Duration {
	switch p {
	case Coarse:
		return CoarseQuantum
	case Auto:
		q := min(lagLimit/2, CoarseQuantum).Truncate(time.Microsecond)
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
