package host

import (
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// sleepUntil is the meter's sleep: the runtime's timer (time.Sleep), which
// parks the goroutine and frees its P while it sleeps, and wakes it through
// the scheduler as a reply wakes a reader (see the package doc).
// bench/hiccup measured it against a blocking clock_nanosleep (plain, with
// a Gosched after each wake, on a locked thread), a raw one that keeps the
// P, and a timerfd read through the netpoller.
func sleepUntil(deadline int64) { time.Sleep(time.Duration(deadline - clock.Now())) }
