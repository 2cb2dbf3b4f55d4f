package openloop_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// An open-model load from a Go test: GETs at 1,000/s for 200 ms against
// the embedded target, latency counted from each request's intended time.
func ExampleRun() {
	srv := embedded.MustStart(embedded.Config{}) // a free loopback port
	defer srv.Close()
	ctx := context.Background()
	conns, err := conn.DialAll(ctx, conn.Options{Addr: srv.Addr(), Now: scheduler.Now}, 4)
	if err != nil {
		log.Fatal(err)
	}
	rate := timeline.RatePerSecond(1000)
	res, err := openloop.Run(ctx, conns, scheduler.Fixed(conn.AppendCommand(nil, "GET", "key")),
		openloop.Config{Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 200 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	// res.Response.ValueAtQuantile(99) is the p99 response time, in ns.
	fmt.Println("scheduled", res.Counts.Scheduled, "completed", res.Counts.Completed)
	// Output: scheduled 200 completed 200
}
