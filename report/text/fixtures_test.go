package text

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// The fixtures of the tests that read this package's internals: the
// same results as report's own tests craft, built through report's API.

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

// serverSample is a server's side of a SET test, with a command name that
// needs escaping.
func serverSample() *serverinfo.Stats {
	keys := uint64(1000)
	return &serverinfo.Stats{Available: true, Keys: &keys, Commands: map[string]serverinfo.Command{
		"set": {Calls: 10002, Usec: 12002, UsecPerCall: 1.2, LatencyHistogram: &serverinfo.Histogram{
			Calls: 10002, Buckets: []serverinfo.Bucket{{LeUsec: 1, Count: 9000}, {LeUsec: 2, Count: 950}, {LeUsec: 8, Count: 52}},
			P50: 1, P99: 2, Max: 8}},
		"info\x1b[2J": {Calls: 1, Usec: 30, UsecPerCall: 30},
	}}
}

// getStats is a server's side that counted calls GETs, 1 µs each.
func getStats(calls uint64) *serverinfo.Stats {
	return &serverinfo.Stats{Available: true, Commands: map[string]serverinfo.Command{"get": {Calls: calls, Usec: calls, UsecPerCall: 1}}}
}

// nodeHist records n response times from base µs up, one µs apart.
func nodeHist(n int, baseUs int64) *hdrhistogram.Histogram {
	h := histo.New()
	for i := range int64(n) {
		_ = h.RecordValue((baseUs + i) * 1000)
	}
	return h
}

// craft builds the test a run of f would have written.
func craft(t *testing.T, f report.SyntheticRun) report.Test {
	t.Helper()
	test, err := report.Synthetic(f)
	if err != nil {
		t.Fatal(err)
	}
	return test
}

// input reads doc back as pacer report would.
func input(t *testing.T, label string, doc *report.Document) report.Input {
	t.Helper()
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.ReadInput(label, b)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
