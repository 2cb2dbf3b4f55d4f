package verdict_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"

	"github.com/pacer-load/pacer/verdict"
)

// A command that judged two tests exits with the worse of their outcomes:
// a run that cannot be trusted outranks a server that missed.
func ExampleWorse() {
	o := verdict.Worse(verdict.Fail, verdict.Inconclusive)
	fmt.Println(o, o.ExitCode())
	// Output: inconclusive 4
}

// result is an open run of 1,000 GETs at 1,000/s: 980 answered in 1 ms
// and 20 in 200 ms; of those 200 ms, lag was the generator's lateness
// before the write, the rest the server's (service time).
func result(lag time.Duration) *scheduler.Result {
	r := &scheduler.Result{
		Name: "GET", Mode: "open", Arrival: "uniform", Pacing: "precise", Connections: 4,
		TargetRate: timeline.RatePerSecond(1000), Window: time.Second, LagLimit: time.Millisecond,
		Counts:   scheduler.Counts{Scheduled: 1000, Sent: 1000, Completed: 1000},
		Response: histo.New(), Service: histo.New(), Lag: histo.New(),
	}
	record := func(n int, response, lag time.Duration) {
		for range n {
			r.Response.RecordValue(int64(response))
			r.Service.RecordValue(int64(response - lag))
			r.Lag.RecordValue(int64(lag))
		}
	}
	record(980, time.Millisecond, 20*time.Microsecond)
	record(20, 200*time.Millisecond, lag)
	return r
}

// NewTest judges a run once, from its facts and the SLO. The same
// response times are the server's miss when its own service time misses
// too, and inconclusive when the generator's send lag explains them.
func ExampleNewTest() {
	slo, err := verdict.ParseSLO("p99<50ms")
	if err != nil {
		log.Fatal(err)
	}
	for _, lag := range []time.Duration{20 * time.Microsecond, 199 * time.Millisecond} {
		t, j, err := verdict.NewTest(result(lag), report.TestOptions{ID: "get"}, slo)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s's miss: %s\n", j.Owners[0], j.Reason)
		if err := text.Quiet(os.Stdout, t, report.TextOptions{}); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// server's miss: the server missed p99<50ms: service p99 200.016 ms misses 50.000 ms too, on a quiet client host (host not measured)
	// GET: 1000.00 requests per second (target 1000), response p50=1.000 msec p99=200.016 msec, fail, slo violated
	// client's miss: p99<50ms: the server's side met it (service p99 1.000 ms), the client's part did not: its send lag p99 199.098 ms (398% of the bound) made the response time miss 50.000 ms
	// GET: 1000.00 requests per second (target 1000), response p50=1.000 msec p99=200.016 msec, inconclusive, slo violated
}
