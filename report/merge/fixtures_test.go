package merge

import (
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// The fixtures of the tests that read this package's internals: the
// same results and shards as report's own tests craft, built through
// report's API.

// asTest makes a result into a test as NewTest does, judged.
func asTest(t testing.TB, r *scheduler.Result) *report.Test {
	t.Helper()
	tt, _, err := verdict.NewTest(r, report.TestOptions{}, verdict.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// sample builds a deterministic result: 10000 requests with response
// times 1..10 ms, service half of that, lag 10-19 µs.
func sample() *scheduler.Result {
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	for i := int64(1); i <= 10000; i++ {
		resp.Record(i * 1000)
		serv.Record(i * 500)
		lag.Record(10000 + i%10*1000)
	}
	rate, _ := timeline.ParseRate("10k")
	return &scheduler.Result{
		Name: "SET", Mode: "open", TargetRate: rate, Arrival: "uniform", Pacing: "precise",
		Connections: 50,
		Counts:      scheduler.Counts{Scheduled: 10003, Sent: 10002, Completed: 9998, Errors: 2, Timeouts: 2, Unsent: 1},
		Window:      time.Second + 250*time.Microsecond,
		Response:    resp.Snapshot(), Service: serv.Snapshot(), Lag: lag.Snapshot(),
		ErrorCodes: map[string]uint64{"ERR": 1, "WRONGTYPE": 1},
		FirstError: "ERR",
		LagLimit:   time.Millisecond,
	}
}

// craft builds the test a run of f would have written.
func craft(t testing.TB, f report.SyntheticRun) report.Test {
	t.Helper()
	test, err := report.Synthetic(f)
	if err != nil {
		t.Fatal(err)
	}
	return test
}

// shardDoc crafts shard k of n: 1/n of a 3000/s timeline for 2 s, with
// its own service times, in 250 ms intervals.
func shardDoc(t testing.TB, k, n int) *report.Document {
	t.Helper()
	test := craft(t, report.SyntheticRun{Name: "GET", Mode: "open", Rate: 3000 / float64(n), Seconds: 2, Base: 0.1 * float64(k), Interval: 0.25, Seed: uint64(k)})
	test.ID = "get"
	test.StartedAt = "2030-01-01T00:00:10Z"
	limit := 1.0
	test.LagLimitMs = &limit
	d := report.SyntheticDocument("open", test)
	d.Config = map[string]any{"connections": 10.0, "rate": 3000.0, "tests": []any{"get"}, "seed_str": "7", "arrival": "uniform", "duration_s": 2.0, "target": "10.0.0.5:6379"}
	d.Shard = &report.Shard{K: k, N: n}
	d.StartAt = "2030-01-01T00:00:10Z"
	return d
}

// shardJSON holds each crafted shard's document as pacer wrote it, by
// [k, n].
var shardJSON sync.Map

// shardInputs are the n shards of a run, read as pacer merge reads them.
func shardInputs(t testing.TB, n int) []Input {
	t.Helper()
	var in []Input
	for k := 1; k <= n; k++ {
		b, ok := shardJSON.Load([2]int{k, n})
		if !ok {
			text, err := shardDoc(t, k, n).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			b, _ = shardJSON.LoadOrStore([2]int{k, n}, text)
		}
		got, err := report.ReadInput("x", b.([]byte))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, Input{Label: "shard-" + string(rune('0'+k)) + ".json", Doc: got.Doc})
	}
	return in
}
