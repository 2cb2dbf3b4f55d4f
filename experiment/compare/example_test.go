package compare_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/compare"
	"github.com/pacer-load/pacer/timeline"
)

// Measure runs a workload closed-loop (the redis-benchmark way), then
// open-loop, and judges both; Write prints them side by side with the
// reading of the gap (how much queueing the closed loop's percentiles
// hide).
func ExampleMeasure() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	env := experiment.InProcessEnv(srv.Addr()) // the embedded target shares this process: for the verdict's attribution
	get := experiment.Command("get", "GET", "GET", "key")
	runs, err := compare.Measure(context.Background(), env, compare.Config{
		Test: get, Rate: timeline.RatePerSecond(1000), Duration: 100 * time.Millisecond,
		Conns: 2, Pipeline: 1, Arrival: "uniform",
	})
	if err != nil {
		log.Fatal(err)
	}
	// compare.Write(os.Stdout, runs, nil) prints the table and the reading.
	for _, r := range runs {
		fmt.Println(r.Label, r.Test.Mode, r.Test.Counts.Errors, "errors")
	}
	// Output:
	// GET (closed loop) closed 0 errors
	// GET (open loop at 1000 req/s) open 0 errors
}
