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
)

// CoarseQuantum is the wake interval of coarse pacing. It is a little under
// a millisecond because on this class of machine a thread that sleeps a
// whole millisecond often wakes 0.3 ms late (the idle vCPU is slow to come
// back); 0.8 ms keeps the send-lag p99 near 1.1 ms.
const CoarseQuantum = 800 * time.Microsecond

// String names the pacing as the CLI spells it.
func (p Pacing) String() string {
	if p == Coarse {
		return "coarse"
	}
	return "precise"
}

// ParsePacing reads "precise" or "coarse".
func ParsePacing(s string) (Pacing, bool) {
	switch s {
	case "precise":
		return Precise, true
	case "coarse":
		return Coarse, true
	}
	return Precise, false
}
