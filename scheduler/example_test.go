package scheduler_test

import (
	"fmt"

	"github.com/pacer-load/pacer/scheduler"
)

// How often each pacing wakes the open driver's pacer under its default
// send-lag limit: precise at every due instant (0), coarse every
// CoarseQuantum, auto as rarely as the limit allows after WakeReserve.
func ExamplePacing_Quantum() {
	for _, p := range []scheduler.Pacing{scheduler.Precise, scheduler.Coarse, scheduler.Auto} {
		fmt.Println(p, scheduler.DefaultLagLimit(p), p.Quantum(scheduler.DefaultLagLimit(p)))
	}
	// Output:
	// precise 1ms 0s
	// coarse 2ms 800µs
	// auto 1ms 600µs
}
