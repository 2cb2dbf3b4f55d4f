package stream_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/stream"
	"github.com/pacer-load/pacer/timeline"
)

// A producer adds 300 entries at 1000 a second to one stream, read by two
// consumer groups of two consumers each: every entry reaches one consumer
// of each group, once, and is acknowledged.
func ExampleRun() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	rate := timeline.RatePerSecond(1000)
	cfg := stream.Config{Name: "example", Streams: 1, Prefix: stream.DefaultPrefix, Groups: 2, Consumers: 2, Count: stream.DefaultCount,
		Block: 100 * time.Millisecond, Size: 64, Producers: 1,
		Timeline: timeline.Uniform{Rate: rate}, Open: openloop.Config{Rate: rate, Requests: 300, HiccupInterval: -1}}
	res, err := stream.Run(context.Background(), experiment.InProcessEnv(srv.Addr()), cfg)
	if err != nil {
		log.Fatal(err)
	}
	m := res.Messages
	fmt.Printf("added %d, delivered %d of %d, never delivered %d, acknowledged %d\n", res.Added, m.Delivered, m.Expected, m.Lost, res.Acked)
	// Output: added 300, delivered 600 of 600, never delivered 0, acknowledged 600
}
