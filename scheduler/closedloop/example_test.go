package closedloop_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
)

// A redis-benchmark-style closed loop from a Go test: 1,000 SETs over 4
// connections, 8 in flight on each, against the embedded target; latency
// counts from each batch's actual send.
func ExampleRun() {
	srv := embedded.MustStart(embedded.Config{}) // a free loopback port
	defer srv.Close()
	ctx := context.Background()
	conns, err := conn.DialAll(ctx, conn.Options{Addr: srv.Addr(), Now: scheduler.Now}, 4)
	if err != nil {
		log.Fatal(err)
	}
	set := scheduler.Fixed(conn.AppendCommand(nil, "SET", "key", "value"))
	res, err := closedloop.Run(ctx, conns, closedloop.Config{Requests: 1000, Pipeline: 8,
		NewCommands: func(int) scheduler.Commands { return set }})
	if err != nil {
		log.Fatal(err)
	}
	// res.Micros holds the same latencies the way redis-benchmark does.
	fmt.Println("sent", res.Counts.Sent, "completed", res.Counts.Completed)
	// Output: sent 1000 completed 1000
}
