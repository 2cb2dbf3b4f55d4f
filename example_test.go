package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer"
)

// A Go test of a server's tail latency, in five lines: 1,000 GETs a
// second for a second against the embedded target (a server of your own
// at its address alike), judged against an SLO.
func ExampleRun() {
	srv, err := pacer.Serve(pacer.Faults{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	res, err := pacer.Run(ctx, pacer.Load{Addr: srv.Addr(), Rate: 1000, Duration: time.Second, Command: []string{"GET", "key:__rand_int__"}})
	if err != nil {
		log.Fatal(err)
	}
	if err := res.Check("p99<=500ms,errors<0.1%"); err != nil {
		log.Fatal(err)
	}

	fmt.Println(res.Name, res.Counts.Scheduled, "scheduled,", res.Counts.Completed, "completed")
	fmt.Println("p99 within the bound:", res.Response.P99 <= 500*time.Millisecond)
	// Output:
	// GET key:__rand_int__ 1000 scheduled, 1000 completed
	// p99 within the bound: true
}

// The closed loop, as redis-benchmark runs it: 50 clients until 10,000
// SETs completed.
func ExampleBench() {
	srv, err := pacer.Serve(pacer.Faults{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	res, err := pacer.Bench(context.Background(), pacer.BenchLoad{Load: pacer.Load{Addr: srv.Addr(), Test: "set"}, Requests: 10000})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Name, res.Counts.Completed, "completed,", res.Outcome)
	// Output:
	// SET 10000 completed, pass
}

// A server whose service time misses the bound fails the check, and the
// error says whose the miss is.
func ExampleResult_Check() {
	srv, err := pacer.Serve(pacer.Faults{Delay: "20ms"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	res, err := pacer.Run(context.Background(), pacer.Load{Addr: srv.Addr(), Rate: 100, Duration: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	err = res.Check("p50<=1ms")
	var v *pacer.VerdictError
	if errors.As(err, &v) {
		fmt.Println(v.Outcome, v.Missed)
	}
	// Output:
	// fail [p50<=1ms]
}
