package report_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
)

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
		_, err := merge.Merge(tc.change(reporttest.Shards[merge.Input](t, 3)), merge.Options{Partial: tc.partial})
		if !errors.Is(err, report.ErrMerge) || !strings.Contains(usagetest.CLI(err), tc.want) || strings.Contains(usagetest.CLI(err), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
	// --partial merges what there is and says which.
	doc, err := merge.Merge(reporttest.Shards[merge.Input](t, 3)[1:], merge.Options{Partial: true})
	if err != nil || len(doc.Shard.Merged) != 2 || doc.Shard.Merged[0] != 2 || doc.Tests[0].Counts.Scheduled != 4000 {
		t.Fatalf("partial: %v %+v", err, doc)
	}
}
