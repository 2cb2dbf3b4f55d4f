package report_test

import (
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// NewTest makes a run's result into the report's test: its JSON form,
// with its exact figures kept beside it. It does not judge it
// (verdict.NewTest does), so its verdict is still empty.
func ExampleNewTest() {
	r := &scheduler.Result{
		Name: "GET", Mode: "open", Arrival: "uniform", Pacing: "precise", Connections: 4,
		TargetRate: timeline.RatePerSecond(1000), Window: time.Second, LagLimit: time.Millisecond,
		Counts:   scheduler.Counts{Scheduled: 1000, Sent: 1000, Completed: 1000},
		Response: histo.New(), Service: histo.New(), Lag: histo.New(),
	}
	for i := range 1000 {
		r.Response.RecordValue(int64(time.Millisecond) + int64(i)*1000)
		r.Service.RecordValue(int64(time.Millisecond))
		r.Lag.RecordValue(int64(20 * time.Microsecond))
	}
	t, err := report.NewTest(r, report.TestOptions{ID: "get"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.0f req/s, response p99 %.3f ms, verdict %q\n", t.ID, t.Achieved(), t.ResponseMs.P99, t.Verdict)
	// Output:
	// get: 1000 req/s, response p99 1.990 ms, verdict ""
}
