package watch_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// A watcher gets the test's Live from the driver's OnStart and reads it on
// a goroutine of its own while the test runs (Progress prints a line a
// second from it); the final call comes when the watcher is stopped.
func ExampleLive() {
	srv, err := embedded.Start(embedded.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	conns, err := conn.DialAll(ctx, conn.Options{Addr: srv.Addr(), Now: scheduler.Now}, 2)
	if err != nil {
		log.Fatal(err)
	}
	live := make(chan *scheduler.Live, 1)
	stop := watch.Live(live, 20*time.Millisecond,
		func(*scheduler.Live) { fmt.Println("started") },
		func(l *scheduler.Live) { _ = l.Progress() }, // a progress line's numbers, every 20 ms
		func(l *scheduler.Live) { fmt.Println("completed", l.Progress().Completed) })
	rate := timeline.RatePerSecond(1000)
	_, err = openloop.Run(ctx, conns, scheduler.Fixed(conn.AppendCommand(nil, "PING")), openloop.Config{
		Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Duration: 100 * time.Millisecond,
		OnStart: func(l *scheduler.Live) { live <- l },
	})
	stop()
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// started
	// completed 100
}

// Redraw writes a line over the terminal's current one, one column short
// of its width, and clears the rest.
func ExampleRedraw() {
	var b bytes.Buffer
	watch.Redraw(&b, "GET  1.0s/5.0s  sent 1000/s  completed 1000/s", 20)
	fmt.Printf("%q\n", b.String())
	// Output: "\rGET  1.0s/5.0s  sen\x1b[K"
}
