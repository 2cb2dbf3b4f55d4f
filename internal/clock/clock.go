// Package clock is pacer's time source: the runtime's monotonic clock
// (CLOCK_MONOTONIC on Linux) and two ways of sleeping to an absolute
// instant on it. Everything that timestamps or waits — the pacer, the
// connections' readers, the embedded target's fault injection — uses it,
// so their instants compare directly.
package clock

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock, about half the cost of
// time.Now, and the clock clock_nanosleep sleeps on.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the monotonic clock in nanoseconds.
func Now() int64 { return nanotime() }
