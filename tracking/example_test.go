package tracking_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/tracking"
)

// A writer at 1000 writes a second to 200 keys that three readers cache:
// every write invalidates every reader's copy once, and each reader reads
// the key again.
func ExampleRun() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	rate := timeline.RatePerSecond(1000)
	// One write per key, so no write can land between an invalidation and
	// its refetch (it would be uncached, not expected), however slow the host.
	cfg := tracking.Config{Name: "example", Keys: 200, Prefix: tracking.DefaultPrefix, Readers: 3, Size: 64, Writers: 1,
		Timeline: timeline.Uniform{Rate: rate}, Open: openloop.Config{Rate: rate, Requests: 200, HiccupInterval: -1}}
	out, err := tracking.Run(context.Background(), experiment.InProcessEnv(srv.Addr()), cfg)
	if err != nil {
		log.Fatal(err)
	}
	res := out.Open
	m := res.Messages
	fmt.Printf("written %d, invalidations delivered %d of %d, lost %d; refetches %d\n",
		res.Written, m.Delivered, m.Expected, m.Lost, res.Counts.Refetches)
	// Output: written 200, invalidations delivered 600 of 600, lost 0; refetches 600
}
