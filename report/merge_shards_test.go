package report_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
)

// shardDoc crafts shard k of n: 1/n of a 3000/s timeline for 2 s, with
// its own service times, in 250 ms intervals.
func shardDoc(t *testing.T, k, n int) *report.Document {
	t.Helper()
	test := report.Craft(t, report.Fixture{Name: "GET", Mode: "open", Rate: 3000 / float64(n), Seconds: 2, Base: 0.1 * float64(k), Interval: 0.25, Seed: uint64(k)})
	test.ID = "get"
	test.StartedAt = "2030-01-01T00:00:10Z"
	limit := 1.0
	test.LagLimitMs = &limit
	d := report.CraftDoc("open", test)
	d.Config = map[string]any{"connections": 10.0, "rate": 3000.0, "tests": []any{"get"}, "seed_str": "7", "arrival": "uniform", "duration_s": 2.0, "target": "10.0.0.5:6379"}
	d.Shard = &report.Shard{K: k, N: n}
	d.StartAt = "2030-01-01T00:00:10Z"
	return d
}

// shardJSON holds each crafted shard's document as pacer wrote it, by
// [k, n]: crafting allocates a histogram per interval, which the race
// detector makes the bulk of this package's test time, and every test
// wants the same shards.
var shardJSON sync.Map

func shardInputs(t *testing.T, n int) []merge.Input {
	t.Helper()
	var in []merge.Input
	for k := 1; k <= n; k++ {
		b, ok := shardJSON.Load([2]int{k, n})
		if !ok {
			text, err := shardDoc(t, k, n).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			b, _ = shardJSON.LoadOrStore([2]int{k, n}, text)
		}
		// Read anew each time, as pacer merge reads them: the tests change
		// their copies.
		got, err := report.ReadInput("x", b.([]byte))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, merge.Input{Label: "shard-" + string(rune('0'+k)) + ".json", Doc: got.Doc})
	}
	return in
}

// TestMergeRefuses: documents that are not the shards of one timeline.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(in []merge.Input) []merge.Input
		partial bool
		want    string
	}{
		{"a missing shard", func(in []merge.Input) []merge.Input { return in[:2] }, false, "shard 3 of 3 missing"},
		{"the same shard twice", func(in []merge.Input) []merge.Input { return append(in, in[0]) }, false, "are both shard 1/3"},
		{"another rate", func(in []merge.Input) []merge.Input { in[1].Doc.Config["rate"] = 6000.0; return in }, false, "differ in rate: 3000 and 6000"},
		{"another seed", func(in []merge.Input) []merge.Input { in[2].Doc.Config["seed_str"] = "8"; return in }, false, "differ in seed_str"},
		{"another target", func(in []merge.Input) []merge.Input { in[2].Doc.Config["target"] = "10.0.0.6:6379"; return in }, false, "differ in target"},
		{"another split", func(in []merge.Input) []merge.Input { in[1].Doc.Shard.N = 4; return in }, false, "not the same split"},
		{"another start", func(in []merge.Input) []merge.Input { in[1].Doc.StartAt = ""; return in }, false, "give every shard the same --start-at"},
		{"another interval", func(in []merge.Input) []merge.Input { in[1].Doc.Tests[0].IntervalS = 1; return in }, false, "differ in interval_s"},
		{"another test", func(in []merge.Input) []merge.Input { in[1].Doc.Tests[0].ID = "set"; return in }, false, "differ in test"},
		{"fewer tests", func(in []merge.Input) []merge.Input { in[1].Doc.Tests = nil; return in }, false, "holds 1 tests"},
		{"not a shard", func(in []merge.Input) []merge.Input { in[1].Doc.Shard = nil; return in }, false, "is not a shard's result"},
		{"a merged one", func(in []merge.Input) []merge.Input { in[1].Doc.Shard.K = 0; return in }, false, "already a merged result"},
		{"a closed loop", func(in []merge.Input) []merge.Input { in[0].Doc.Mode = "closed"; return in }, true, "only open-model results"},
	}
	for _, tc := range tests {
		_, err := merge.Merge(tc.change(shardInputs(t, 3)), merge.Options{Partial: tc.partial})
		if !errors.Is(err, report.ErrMerge) || !strings.Contains(usagetest.CLI(err), tc.want) || strings.Contains(usagetest.CLI(err), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
	// --partial merges what there is and says which.
	doc, err := merge.Merge(shardInputs(t, 3)[1:], merge.Options{Partial: true})
	if err != nil || len(doc.Shard.Merged) != 2 || doc.Shard.Merged[0] != 2 || doc.Tests[0].Counts.Scheduled != 4000 {
		t.Fatalf("partial: %v %+v", err, doc)
	}
}
