package text_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Quiet is the one line a run prints per test with -q: throughput, the
// response time's p50 and p99, and the verdict.
func ExampleQuiet() {
	r := &scheduler.Result{
		Name: "GET", Mode: "open", Arrival: "uniform", Pacing: "precise", Connections: 4,
		TargetRate: timeline.RatePerSecond(1000), Window: time.Second, LagLimit: time.Millisecond,
		Counts:   scheduler.Counts{Scheduled: 1000, Sent: 1000, Completed: 1000},
		Response: histo.New(), Service: histo.New(), Lag: histo.New(),
	}
	for range 1000 {
		r.Response.RecordValue(int64(time.Millisecond))
		r.Service.RecordValue(int64(980 * time.Microsecond))
		r.Lag.RecordValue(int64(20 * time.Microsecond))
	}
	t, _, err := verdict.NewTest(r, report.TestOptions{ID: "get"}, verdict.SLO{})
	if err != nil {
		log.Fatal(err)
	}
	if err := text.Quiet(os.Stdout, t, report.TextOptions{}); err != nil {
		log.Fatal(err)
	}
	// Output: GET: 1000.00 requests per second (target 1000), response p50=1.000 msec p99=1.000 msec, pass
}

// ServerLine says which server a run measured, as run prints it above
// the first test.
func ExampleServerLine() {
	keys := uint64(1234)
	fmt.Println(text.ServerLine(&serverinfo.Identity{Available: true, Name: "redis", Version: "7.0.15", RedisVersion: "7.0.15",
		Mode: "standalone", Keys: &keys, Config: map[string]string{"save": "", "appendonly": "no"}}))
	// Output: server: redis 7.0.15 (standalone); save "", appendonly no; 1234 keys
}
