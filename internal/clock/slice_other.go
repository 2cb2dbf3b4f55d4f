//go:build !linux

package clock

import "time"

// ShortSlice is the time slice the pacing thread asks for where the kernel
// lets it (Linux).
const ShortSlice = 100 * time.Microsecond

// Thread returns 0: threads are not told apart here.
func Thread() int { return 0 }

// SetShortSlice does nothing here: only Linux has a per-task slice.
func SetShortSlice(tid int) bool { return false }

// ResetSlice does nothing here.
func ResetSlice(tid int) {}

// Slice returns 0: the slice is unknown here.
func Slice(tid int) time.Duration { return 0 }

// PreciseTimers does nothing here: it reports false.
func PreciseTimers() bool { return false }

// DefaultTimers does nothing here.
func DefaultTimers() {}

// TimerSlack returns 0: unknown here.
func TimerSlack() time.Duration { return 0 }
