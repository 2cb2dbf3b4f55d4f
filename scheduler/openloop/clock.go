package openloop

import "github.com/pacer-load/pacer/internal/clock"

// The pacer's clock and sleep: scheduler.Now's monotonic clock, and the
// raw clock_nanosleep that keeps the pacer's goroutine on its P.

func nanotime() int64 { return clock.Now() }

const havePreciseSleep = clock.HavePrecise

func preciseSleepUntil(deadline int64) { clock.RawSleepUntil(deadline) }
