package sweep_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/sweep"
	"github.com/pacer-load/pacer/report"
)

// The knee of a closed sweep is the first point whose throughput gained
// less than 5% over the point before while its p99 grew by more than 20%:
// more clients only wait longer.
func ExampleFindKnee() {
	pts := []report.ClosedPoint{
		{Clients: 1, Throughput: 20_000, P99Ms: 0.10},
		{Clients: 2, Throughput: 38_000, P99Ms: 0.12},
		{Clients: 4, Throughput: 60_000, P99Ms: 0.15},
		{Clients: 8, Throughput: 61_000, P99Ms: 0.30},
		{Clients: 16, Throughput: 61_500, P99Ms: 0.62},
	}
	k := sweep.FindKnee(pts)
	fmt.Println("knee at", pts[k].Clients, "clients")
	// Output: knee at 8 clients
}

// An open sweep steps the rate and reads what the server did at each
// step: here the embedded target at 500 and 1,000 GETs a second, 100 ms
// a step.
func ExampleOpen() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	env := experiment.InProcessEnv(srv.Addr()) // the embedded target shares this process: for the verdict's attribution
	get := experiment.Command("get", "GET", "GET", "key")
	res, err := sweep.Open(context.Background(), env, sweep.Config{
		Test: get, Rates: []float64{500, 1000}, StepDuration: 100 * time.Millisecond,
		Arrival: "uniform", Conns: 2, Repeat: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	// res.Text is the step table, with its notes and conclusion.
	for _, t := range res.Tests {
		fmt.Println(t.Name, t.Counts.Scheduled, "scheduled,", t.Counts.Completed, "completed")
	}
	// Output:
	// GET at 500/s 50 scheduled, 50 completed
	// GET at 1000/s 100 scheduled, 100 completed
}
