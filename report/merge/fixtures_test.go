package merge

import (
	"sync"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
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
