package reporttest

import (
	"sync"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

// AsTest makes a result into a test as verdict.NewTest does, judged,
// without an SLO.
func AsTest(t testing.TB, r *scheduler.Result) *report.Test {
	t.Helper()
	tt, _, err := verdict.NewTest(r, report.TestOptions{}, verdict.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// Craft builds the test a run of f would have written (report.Synthetic).
func Craft(t testing.TB, f report.SyntheticRun) report.Test {
	t.Helper()
	test, err := report.Synthetic(f)
	if err != nil {
		t.Fatal(err)
	}
	return test
}

// Input reads doc back as pacer report would.
func Input(t testing.TB, label string, doc *report.Document) report.Input {
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

// ShardDoc crafts shard k of n: 1/n of a 3000/s timeline for 2 s, with
// its own service times, in 250 ms intervals.
func ShardDoc(t testing.TB, k, n int) *report.Document {
	t.Helper()
	test := Craft(t, report.SyntheticRun{Name: "GET", Mode: "open", Rate: 3000 / float64(n), Seconds: 2, Base: 0.1 * float64(k), Interval: 0.25, Seed: uint64(k)})
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
// [k, n]: crafting allocates a histogram per interval, which the race
// detector makes the bulk of a merge test's time, and every test wants
// the same shards.
var shardJSON sync.Map

// Shards are the n shards of a run (ShardDoc), labelled shard-K.json and
// read anew each time as pacer merge reads them: the tests change their
// copies. I is merge's Input, which this package cannot name.
func Shards[I ~struct {
	Label string
	Doc   *report.Document
}](t testing.TB, n int) []I {
	t.Helper()
	var in []I
	for k := 1; k <= n; k++ {
		b, ok := shardJSON.Load([2]int{k, n})
		if !ok {
			text, err := ShardDoc(t, k, n).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			b, _ = shardJSON.LoadOrStore([2]int{k, n}, text)
		}
		got, err := report.ReadInput("x", b.([]byte))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, I{Label: "shard-" + string(rune('0'+k)) + ".json", Doc: got.Doc})
	}
	return in
}
