//go:build !linux

package clock

import "time"

// HavePrecise reports whether the precise sleeps are real.
const HavePrecise = false

// RawSleepUntil sleeps until deadline with the runtime's timers.
func RawSleepUntil(deadline int64) { time.Sleep(time.Duration(deadline - nanotime())) }

// SleepUntil sleeps until deadline with the runtime's timers.
func SleepUntil(deadline int64) { time.Sleep(time.Duration(deadline - nanotime())) }
