package scheduler_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/scheduler"
)

// An open-model load from a Go test: GETs at 1,000/s for 200 ms against
// the embedded target, latency counted from each request's intended time.
func ExampleRunOpen() {
	srv := embedded.MustStart(embedded.Config{}) // a free loopback port
	defer srv.Close()
	ctx := context.Background()
	conns, err := conn.DialAll(ctx, conn.Options{Addr: srv.Addr(), Now: scheduler.Now}, 4)
	if err != nil {
		log.Fatal(err)
	}
	rate := scheduler.RatePerSecond(1000)
	res, err := scheduler.RunOpen(ctx, conns, scheduler.Fixed(conn.AppendCommand(nil, "GET", "key")),
		scheduler.OpenConfig{Timeline: scheduler.Uniform{Rate: rate}, Rate: rate, Duration: 200 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	// res.Response.ValueAtQuantile(99) is the p99 response time, in ns.
	fmt.Println("scheduled", res.Counts.Scheduled, "completed", res.Counts.Completed)
	// Output: scheduled 200 completed 200
}

// A timeline is arithmetic on the request index: request i is due at
// t0 + Offset(i), however late the generator runs.
func ExampleUniform() {
	rate, err := scheduler.ParseRate("2.5k")
	if err != nil {
		log.Fatal(err)
	}
	tl := scheduler.Uniform{Rate: rate}
	for _, i := range []uint64{0, 1, 2, 2500} {
		fmt.Println(i, time.Duration(tl.Offset(i)))
	}
	fmt.Println(scheduler.Count(tl, int64(time.Second), math.MaxUint64), "requests in the first second")
	// Output:
	// 0 0s
	// 1 400µs
	// 2 800µs
	// 2500 1s
	// 2500 requests in the first second
}

// Stages ramp the rate piecewise-linearly; intended times still come from
// the index, by inverting the integral of the rate.
func ExampleNewStages() {
	list, err := scheduler.ParseStages("1s:1k,1s:1k")
	if err != nil {
		log.Fatal(err)
	}
	st, err := scheduler.NewStages(list)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(scheduler.FormatStages(list))
	// From 0 to 1,000/s in the first second (500 requests), then 1,000/s.
	for _, i := range []uint64{0, 500, 1000} {
		fmt.Println(i, time.Duration(st.Offset(i)))
	}
	// Output:
	// 1s:1000,1s:1000
	// 0 0s
	// 500 1s
	// 1000 1.5s
}

// Shards split one timeline between processes: shard K of N sends the
// requests i with i mod N = K−1, at their global intended times.
func ExampleNewShard() {
	tl := scheduler.Uniform{Rate: scheduler.RatePerSecond(1000)}
	sh, err := scheduler.NewShard(tl, 2, 3)
	if err != nil {
		log.Fatal(err)
	}
	for j := range uint64(3) {
		i, _ := sh.Global(j)
		fmt.Println(j, i, time.Duration(sh.Offset(j)))
	}
	// Output:
	// 0 1 1ms
	// 1 4 4ms
	// 2 7 7ms
}
