package report_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
	reporttext "github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
)

// TestNodesReadBack: a cluster result's nodes survive the JSON with their
// counts, redirects and histograms, and the text of the read-back result
// prints the node table the run printed.
func TestNodesReadBack(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	r.Nodes = []scheduler.NodeResult{
		{Node: scheduler.Node{Addr: "127.0.0.1:7001", ID: strings.Repeat("a", 40), Slots: 5461}, Connections: 2,
			Counts:    scheduler.Counts{Scheduled: 5001, Sent: 5001, Completed: 4999, Errors: 2},
			Redirects: 4, Moved: 3, Ask: 1, Response: resulttest.NodeHist(4999, 100)},
		{Node: scheduler.Node{Addr: "127.0.0.1:7002", ID: strings.Repeat("b", 40), Slots: 10923}, Connections: 2,
			Counts:   scheduler.Counts{Scheduled: 5002, Sent: 5001, Completed: 4999, Timeouts: 2, Unsent: 1},
			Response: resulttest.NodeHist(4999, 900)},
		{Node: scheduler.Node{Addr: "127.0.0.1:7003"}, Response: histo.New()}, // nothing reached it
	}
	var live bytes.Buffer
	if err := reporttext.Text(&live, report.AsTest(t, r, nil), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	test, err := report.FromResult(r)
	if err != nil {
		t.Fatal(err)
	}
	back := report.InputOf(t, "a.json", report.CraftDoc("open", test)).Doc
	got := &back.Tests[0]
	f, err := got.Facts()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != len(r.Nodes) || len(f.Nodes) != len(r.Nodes) {
		t.Fatalf("%d nodes read back (%d histograms), %d written", len(got.Nodes), len(f.Nodes), len(r.Nodes))
	}
	for i, n := range got.Nodes {
		w := r.Nodes[i]
		if n.Addr != w.Addr || n.ID != w.ID || n.Slots != w.Slots || n.Connections != w.Connections || nodeCounts(n) != w.Counts ||
			n.Redirects != w.Redirects || n.Moved != w.Moved || n.Ask != w.Ask || !f.Nodes[i].Equals(w.Response) {
			t.Errorf("node %d read back as %+v, written %+v", i, n, w)
		}
	}
	var text bytes.Buffer
	if err := reporttext.Render(&text, back); err != nil {
		t.Fatal(err)
	}
	want := nodeTable(live.String())
	if want == "" || strings.Count(want, "\n") != 4 {
		t.Fatalf("the run's text has no node table of 3 nodes:\n%s", live.String())
	}
	if g := nodeTable(text.String()); g != want {
		t.Errorf("report's node table:\n%s\nthe run's:\n%s", g, want)
	}
	// A document written before nodes carried histograms still reads
	// back: its nodes' counts, without latencies.
	old := back.Tests[0]
	old.Nodes = append([]report.Node(nil), old.Nodes...)
	for i := range old.Nodes {
		old.Nodes[i].Histograms = report.NodeHistograms{}
	}
	report.ForgetFacts(&old)
	of, err := old.Facts()
	if err != nil || len(of.Nodes) != 3 || of.Nodes[0] != nil || nodeCounts(old.Nodes[0]) != r.Nodes[0].Counts {
		t.Fatalf("old document: %v %+v", err, of)
	}
	// A node histogram that does not decode is refused on reading.
	bad := back.Tests[0]
	bad.Nodes = append([]report.Node(nil), bad.Nodes...)
	bad.Nodes[1].Histograms.Response = "bm90IGEgaGlzdG9ncmFt"
	b, err := report.CraftDoc("open", bad).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.ReadInput("bad.json", b); err == nil || !strings.Contains(err.Error(), `node "127.0.0.1:7002"`) {
		t.Errorf("a node histogram that does not decode: %v", err)
	}
}

// TestMergeNodes: the shards' nodes are matched by addr (and id where both
// have one), their counts summed, their histograms added, so each node's
// percentiles are those of all its requests; a node only one shard saw
// is kept with its counts; the merged nodes read back and print.
func TestMergeNodes(t *testing.T) {
	t.Parallel()
	in := clusterShards(t)
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	back := report.InputOf(t, "merged.json", doc).Doc
	got := back.Tests[0].Nodes
	if len(got) != 3 || got[0].Addr != "10.0.0.1:7001" || got[1].Addr != "10.0.0.2:7002" || got[2].Addr != "10.0.0.3:7003" {
		t.Fatalf("merged nodes %+v", got)
	}
	for _, m := range got {
		var want report.Node
		var hs []string
		for _, s := range in {
			for _, n := range s.Doc.Tests[0].Nodes {
				if n.Addr != m.Addr {
					continue
				}
				if want.Addr == "" {
					want.Slots = n.Slots // the first shard's view
				}
				want.Addr = n.Addr
				want.ID = max(want.ID, n.ID)
				want.Connections += n.Connections
				want.Scheduled += n.Scheduled
				want.Sent += n.Sent
				want.Completed += n.Completed
				want.Errors += n.Errors
				want.Redirects += n.Redirects
				want.Moved += n.Moved
				want.Ask += n.Ask
				hs = append(hs, n.Histograms.Response)
			}
		}
		sum, _ := histo.Merge(decodeAll(t, hs...)...)
		if h := decodeAll(t, m.Histograms.Response)[0]; !h.Equals(sum) || h.TotalCount() != int64(want.Completed) {
			t.Errorf("%s: the merged histogram is not the sum of the shards'", m.Addr)
		}
		ws := histo.Summarize(sum)
		ws.Count = 0
		if m.ResponseMs == nil || *m.ResponseMs != ws {
			t.Errorf("%s: response %+v, want the added histograms' %+v", m.Addr, m.ResponseMs, ws)
		}
		m.ResponseMs, m.Histograms = nil, report.NodeHistograms{}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("merged node\n%+v, want the sums\n%+v", m, want)
		}
	}
	if got[2].Completed != 50 || got[2].Connections != 2 {
		t.Errorf("the node only shard 3 saw: %+v", got[2])
	}
	var text bytes.Buffer
	if err := reporttext.Render(&text, back); err != nil {
		t.Fatal(err)
	}
	table := nodeTable(text.String())
	for _, a := range []string{"10.0.0.1:7001", "10.0.0.2:7002", "10.0.0.3:7003"} {
		if !strings.Contains(table, "  "+a+" ") {
			t.Errorf("the report's node table lacks %s:\n%s", a, text.String())
		}
	}
	// A shard that has no nodes (another primary, no cluster) merges to
	// no per-node rows of its own.
	if doc, err := merge.Merge(reporttest.Shards[merge.Input](t, 3), merge.Options{}); err != nil || doc.Tests[0].Nodes != nil {
		t.Errorf("shards without nodes: %v %+v", err, doc.Tests[0].Nodes)
	}
}

// nodeTable is the per-node table of a text report, "" when it has none.
func nodeTable(text string) string { return testrun.Section(text, "  per node") }

// nodeCounts are a node's counts as a test's.
func nodeCounts(n report.Node) scheduler.Counts {
	return scheduler.Counts{Scheduled: n.Scheduled, Sent: n.Sent, Completed: n.Completed,
		Errors: n.Errors, Timeouts: n.Timeouts, Unsent: n.Unsent}
}
