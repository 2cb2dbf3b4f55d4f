package report_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
)

// clusterShards are three shards of a cluster run: shard 3 saw a primary
// (C) the others did not, and shard 2 knows primary B without its id.
func clusterShards(t *testing.T) []merge.Input {
	in := reporttest.Shards[merge.Input](t, 3)
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	nodes := [][]report.Node{
		{craftNode(t, "10.0.0.1:7001", a, 8192, 300, 100), craftNode(t, "10.0.0.2:7002", b, 8192, 700, 2000)},
		{craftNode(t, "10.0.0.2:7002", "", 8000, 500, 50), craftNode(t, "10.0.0.1:7001", a, 8384, 400, 700)},
		{craftNode(t, "10.0.0.1:7001", a, 8192, 100, 5000), craftNode(t, "10.0.0.2:7002", b, 8000, 100, 10),
			craftNode(t, "10.0.0.3:7003", c, 192, 50, 30)},
	}
	for k := range in {
		in[k].Doc.Config["cluster"] = true
		in[k].Doc.Tests[0].Nodes = nodes[k]
	}
	return in
}

// TestMergeNodesApart: the same address under two ids is two primaries
// (one was replaced between the shards' starts).
func TestMergeNodesApart(t *testing.T) {
	t.Parallel()
	in := clusterShards(t)
	in[2].Doc.Tests[0].Nodes[1].ID = strings.Repeat("d", 40)
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := doc.Tests[0].Nodes
	if len(got) != 4 || got[1].Addr != got[2].Addr || got[1].ID != strings.Repeat("b", 40) || got[2].ID != strings.Repeat("d", 40) ||
		got[1].Completed != 1200 || got[2].Completed != 100 || got[3].Addr != "10.0.0.3:7003" {
		t.Fatalf("merged nodes %+v", got)
	}
}

// TestMergeNodesRefuses: what cannot be merged exactly is refused (exit
// 2 in pacer merge), in one line.
func TestMergeNodesRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(in []merge.Input)
		want   string
	}{
		{"a node without its histogram", func(in []merge.Input) { in[1].Doc.Tests[0].Nodes[0].Histograms.Response = "" },
			`shard-2.json: node "10.0.0.2:7002" has response times but no histogram`},
		{"a cluster and a single server", func(in []merge.Input) { delete(in[2].Doc.Config, "cluster"); in[2].Doc.Tests[0].Nodes = nil },
			"differ in cluster: true and none"},
	}
	for _, tc := range tests {
		in := clusterShards(t)
		tc.change(in)
		_, err := merge.Merge(in, merge.Options{})
		if !errors.Is(err, report.ErrMerge) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
	// A node that answered nothing has neither: nothing to merge.
	in := clusterShards(t)
	n := &in[0].Doc.Tests[0].Nodes[0]
	n.Scheduled, n.Sent, n.Completed, n.Errors = 0, 0, 0, 0
	n.ResponseMs, n.Histograms = nil, report.NodeHistograms{}
	if _, err := merge.Merge(in, merge.Options{}); err != nil {
		t.Errorf("a node without samples: %v", err)
	}
}

// craftNode is one primary's entry as fromResult writes it: counts, the
// summary and the encoded histogram of n responses from baseUs.
func craftNode(t *testing.T, addr, id string, slots, n int, baseUs int64) report.Node {
	t.Helper()
	h := resulttest.NodeHist(n, baseUs)
	enc, err := histo.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	c := uint64(n)
	return report.Node{Addr: addr, ID: id, Slots: slots, Connections: 2, Scheduled: c + 1, Sent: c + 1, Completed: c,
		Errors: 1, Redirects: 3, Moved: 2, Ask: 1, ResponseMs: report.SummaryOf(h), Histograms: report.NodeHistograms{Response: enc}}
}
