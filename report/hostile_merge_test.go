package report_test

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
	"github.com/pacer-load/pacer/timeline"
)

// TestMergeValidatesShardNumbers: k and n are checked as --shard checks
// them (1 ≤ k ≤ n ≤ timeline.MaxShards) before anything is sized by
// them, and every message stays short.
func TestMergeValidatesShardNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k, n int
		want string
	}{
		{"n of 2^62", 1, 1 << 62, "shard 1/4611686018427387904"},
		{"n of MaxInt64", 1, math.MaxInt64, "N from 1 to"},
		{"k above n", 5, 3, "K from 1 to 3"},
		{"negative k", -1, 3, "K from 1 to 3"},
		{"n of zero", 1, 0, "N from 1 to"},
		{"negative n", 1, -3, "N from 1 to"},
	}
	for _, tc := range tests {
		in := reporttest.Shards[merge.Input](t, 3)
		for i := range in {
			in[i].Doc.Shard.N = tc.n
		}
		in[0].Doc.Shard.K = tc.k
		_, err := merge.Merge(in, merge.Options{Partial: true})
		if !errors.Is(err, report.ErrMerge) || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 300 {
			t.Errorf("%s: %v, want a short refusal containing %q", tc.name, err, tc.want)
		}
	}
	// A valid but large N: the list of missing shards is bounded.
	in := reporttest.Shards[merge.Input](t, 3)
	for i := range in {
		in[i].Doc.Shard.N = timeline.MaxShards
	}
	_, err := merge.Merge(in, merge.Options{})
	if !errors.Is(err, report.ErrMerge) || !strings.Contains(err.Error(), "missing") || len(err.Error()) > 300 {
		t.Errorf("1,048,573 missing shards: %.400v", err)
	}
}

// TestMergeRefusesOverflow: counts whose sum does not fit (uint64
// counts, histograms of 3 × 2^62 samples) are refused, not wrapped.
func TestMergeRefusesOverflow(t *testing.T) {
	t.Parallel()
	in := reporttest.Shards[merge.Input](t, 3)
	for i := range in {
		in[i].Doc.Tests[0].Counts.Scheduled = 1 << 63
	}
	if _, err := merge.Merge(in, merge.Options{}); !errors.Is(err, report.ErrMerge) || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("scheduled 3 × 2^63: %v", err)
	}
	in = reporttest.Shards[merge.Input](t, 3)
	for i := range in {
		in[i].Doc.Tests[0].Intervals[2].Completed = math.MaxUint64 - 1
	}
	if _, err := merge.Merge(in, merge.Options{}); !errors.Is(err, report.ErrMerge) || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("an interval's completed: %v", err)
	}
	in = reporttest.Shards[merge.Input](t, 3)
	h := histo.New()
	if err := h.RecordValues(1_000_000, 1<<62); err != nil {
		t.Fatal(err)
	}
	big := report.EncodeHist(t, h)
	for i := range in {
		in[i].Doc.Tests[0].Histograms.Response = big
	}
	if _, err := merge.Merge(in, merge.Options{}); !errors.Is(err, report.ErrMerge) || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("histograms of 3 × 2^62: %v", err)
	}
}

// TestMergeManyNodes: nodes matched through an index (in any order, with
// and without ids) merge exactly. BenchmarkMergeNodes measures the
// matching.
func TestMergeManyNodes(t *testing.T) {
	t.Parallel()
	testrun.SkipRace(t, "900 node histograms matched and added on one goroutine, which the detector only slows (7 s)")
	const nodes = 300
	in := reporttest.Shards[merge.Input](t, 3)
	n := craftNode(t, "x", "", 5, 10, 100)
	for k := range in {
		in[k].Doc.Config["cluster"] = true
		list := make([]report.Node, nodes)
		for i := range list {
			list[i] = n
			list[i].Addr = "10.0." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250) + ":7000"
			list[i].ID = fmt.Sprintf("%040d", i)
			if k == 1 {
				list[i].ID = "" // one shard without ids
			}
		}
		if k == 2 { // another order
			for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
				list[i], list[j] = list[j], list[i]
			}
		}
		in[k].Doc.Tests[0].Nodes = list
	}
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := doc.Tests[0].Nodes
	if len(got) != nodes {
		t.Fatalf("%d merged nodes, want %d", len(got), nodes)
	}
	for i, m := range got {
		if m.Completed != 30 || m.ID != fmt.Sprintf("%040d", i) || m.Addr != in[0].Doc.Tests[0].Nodes[i].Addr {
			t.Fatalf("node %d: %+v", i, m)
		}
	}
}

// TestMergeKeepsOldestInflight: the merged interval's oldest request is
// the oldest of any shard's, its requests in flight the sum.
func TestMergeKeepsOldestInflight(t *testing.T) {
	t.Parallel()
	in := reporttest.Shards[merge.Input](t, 3)
	for k := range in {
		for i := range in[k].Doc.Tests[0].Intervals {
			iv := &in[k].Doc.Tests[0].Intervals[i]
			o, m, f := float64(10*k+i), float64(100*k+i), uint64(k+1)
			iv.OldestInflightMs, iv.OldestInflightMaxMs, iv.InFlight = &o, &m, &f
		}
	}
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range doc.Tests[0].Intervals {
		if iv.OldestInflightMs == nil || *iv.OldestInflightMs != float64(20+i) || *iv.OldestInflightMaxMs != float64(200+i) || *iv.InFlight != 6 {
			t.Fatalf("interval %d: oldest %v max %v in flight %v", i, iv.OldestInflightMs, iv.OldestInflightMaxMs, iv.InFlight)
		}
	}
}

// TestMergeKeepsNodeServerOnce: shards of one cluster each asked every
// primary for its counts, which count every shard's clients, so a merged
// node keeps one shard's reading, not their sum (nor none).
func TestMergeKeepsNodeServerOnce(t *testing.T) {
	t.Parallel()
	in := reporttest.Shards[merge.Input](t, 3)
	for k := range in {
		in[k].Doc.Config["cluster"] = true
		a := craftNode(t, "127.0.0.1:7000", "a", 8192, 10, 100)
		b := craftNode(t, "127.0.0.1:7001", "b", 8192, 10, 100)
		a.Server, b.Server = resulttest.GetStats(900+uint64(k)), resulttest.GetStats(500+uint64(k))
		if k == 0 {
			b.Server = nil // shard 1 did not read node b
		}
		in[k].Doc.Tests[0].Nodes = []report.Node{a, b}
	}
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := doc.Tests[0].Nodes
	if len(got) != 2 || got[0].Server == nil || got[0].Server.Commands["get"].Calls != 900 ||
		got[1].Server == nil || got[1].Server.Commands["get"].Calls != 501 {
		t.Fatalf("merged nodes' server side: %+v", got)
	}
}
