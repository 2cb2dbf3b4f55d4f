package endpoint_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// A Target opens a run's connections (and replaces those that die), and
// its Server asks the server about itself around each test; what the user
// should hear goes to Say.
func ExampleTarget() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	ctx := context.Background()
	t := &endpoint.Target{
		Options: conn.Options{Addr: srv.Addr(), Now: scheduler.Now},
		Say:     func(line string) { fmt.Println(line) },
	}
	server := endpoint.AskServer(ctx, t.Options, t.Say, nil)
	fmt.Println("server:", server.ID.Name)

	conns, err := t.Pool(ctx, t.Options, 3)
	if err != nil {
		log.Fatal(err)
	}
	since := server.Mark(ctx) // just before the test
	rate := timeline.RatePerSecond(1000)
	res, err := openloop.Run(ctx, conns, scheduler.Fixed(conn.AppendCommand(nil, "INCR", "n")),
		openloop.Config{Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Requests: 30, Redial: t.Redial})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("completed:", res.Counts.Completed)
	fmt.Println("the server counted:", since().Commands["incr"].Calls) // just after
	// Output:
	// server: pacer-embedded
	// completed: 30
	// the server counted: 30
}
