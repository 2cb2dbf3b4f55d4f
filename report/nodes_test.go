package report

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// nodeHist records n response times from base µs up, one µs apart.
func nodeHist(n int, baseUs int64) *hdrhistogram.Histogram {
	h := histo.New()
	for i := range int64(n) {
		_ = h.RecordValue((baseUs + i) * 1000)
	}
	return h
}

// craftNode is one primary's entry as fromResult writes it: counts, the
// summary and the encoded histogram of n responses from baseUs.
func craftNode(t *testing.T, addr, id string, slots, n int, baseUs int64) Node {
	t.Helper()
	h := nodeHist(n, baseUs)
	enc, err := histo.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	c := uint64(n)
	return Node{Addr: addr, ID: id, Slots: slots, Connections: 2, Scheduled: c + 1, Sent: c + 1, Completed: c,
		Errors: 1, Redirects: 3, Moved: 2, Ask: 1, ResponseMs: summary(h), Histograms: NodeHistograms{Response: enc}}
}

// nodeTable is the per-node table of a text report, "" when it has none.
func nodeTable(text string) string { return testrun.Section(text, "  per node") }

// TestNodesReadBack: a cluster result's nodes survive the JSON with their
// counts, redirects and histograms, and the text of the read-back result
// prints the node table the run printed.
func TestNodesReadBack(t *testing.T) {
	t.Parallel()
	r := sample()
	r.Nodes = []scheduler.NodeResult{
		{Node: scheduler.Node{Addr: "127.0.0.1:7001", ID: strings.Repeat("a", 40), Slots: 5461}, Connections: 2,
			Counts:    scheduler.Counts{Scheduled: 5001, Sent: 5001, Completed: 4999, Errors: 2},
			Redirects: 4, Moved: 3, Ask: 1, Response: nodeHist(4999, 100)},
		{Node: scheduler.Node{Addr: "127.0.0.1:7002", ID: strings.Repeat("b", 40), Slots: 10923}, Connections: 2,
			Counts:   scheduler.Counts{Scheduled: 5002, Sent: 5001, Completed: 4999, Timeouts: 2, Unsent: 1},
			Response: nodeHist(4999, 900)},
		{Node: scheduler.Node{Addr: "127.0.0.1:7003"}, Response: histo.New()}, // nothing reached it
	}
	var live bytes.Buffer
	if err := Text(&live, asTest(t, r, nil), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	test, err := fromResult(r)
	if err != nil {
		t.Fatal(err)
	}
	back := input(t, "a.json", craftDoc("open", test)).Doc
	got := &back.Tests[0]
	f, err := got.figures()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != len(r.Nodes) || len(f.nodes) != len(r.Nodes) {
		t.Fatalf("%d nodes read back (%d histograms), %d written", len(got.Nodes), len(f.nodes), len(r.Nodes))
	}
	for i, n := range got.Nodes {
		w := r.Nodes[i]
		if n.Addr != w.Addr || n.ID != w.ID || n.Slots != w.Slots || n.Connections != w.Connections || n.counts() != w.Counts ||
			n.Redirects != w.Redirects || n.Moved != w.Moved || n.Ask != w.Ask || !f.nodes[i].Equals(w.Response) {
			t.Errorf("node %d read back as %+v, written %+v", i, n, w)
		}
	}
	var text bytes.Buffer
	if err := Render(&text, back); err != nil {
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
	old.Nodes = append([]Node(nil), old.Nodes...)
	for i := range old.Nodes {
		old.Nodes[i].Histograms = NodeHistograms{}
	}
	old.fig = nil
	of, err := old.figures()
	if err != nil || len(of.nodes) != 3 || of.nodes[0] != nil || old.Nodes[0].counts() != r.Nodes[0].Counts {
		t.Fatalf("old document: %v %+v", err, of)
	}
	// A node histogram that does not decode is refused on reading.
	bad := back.Tests[0]
	bad.Nodes = append([]Node(nil), bad.Nodes...)
	bad.Nodes[1].Histograms.Response = "bm90IGEgaGlzdG9ncmFt"
	b, err := craftDoc("open", bad).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInput("bad.json", b); err == nil || !strings.Contains(err.Error(), `node "127.0.0.1:7002"`) {
		t.Errorf("a node histogram that does not decode: %v", err)
	}
}

// clusterShards are three shards of a cluster run: shard 3 saw a primary
// (C) the others did not, and shard 2 knows primary B without its id.
func clusterShards(t *testing.T) []MergeInput {
	in := shardInputs(t, 3)
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	nodes := [][]Node{
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

// TestMergeNodes: the shards' nodes are matched by addr (and id where both
// have one), their counts summed, their histograms added, so each node's
// percentiles are those of all its requests; a node only one shard saw
// is kept with its counts; the merged nodes read back and print.
func TestMergeNodes(t *testing.T) {
	t.Parallel()
	in := clusterShards(t)
	doc, err := Merge(in, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back := input(t, "merged.json", doc).Doc
	got := back.Tests[0].Nodes
	if len(got) != 3 || got[0].Addr != "10.0.0.1:7001" || got[1].Addr != "10.0.0.2:7002" || got[2].Addr != "10.0.0.3:7003" {
		t.Fatalf("merged nodes %+v", got)
	}
	for _, m := range got {
		var want Node
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
		m.ResponseMs, m.Histograms = nil, NodeHistograms{}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("merged node\n%+v, want the sums\n%+v", m, want)
		}
	}
	if got[2].Completed != 50 || got[2].Connections != 2 {
		t.Errorf("the node only shard 3 saw: %+v", got[2])
	}
	var text bytes.Buffer
	if err := Render(&text, back); err != nil {
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
	if doc, err := Merge(shardInputs(t, 3), MergeOptions{}); err != nil || doc.Tests[0].Nodes != nil {
		t.Errorf("shards without nodes: %v %+v", err, doc.Tests[0].Nodes)
	}
}

// TestMergeNodesApart: the same address under two ids is two primaries
// (one was replaced between the shards' starts).
func TestMergeNodesApart(t *testing.T) {
	t.Parallel()
	in := clusterShards(t)
	in[2].Doc.Tests[0].Nodes[1].ID = strings.Repeat("d", 40)
	doc, err := Merge(in, MergeOptions{})
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
		change func(in []MergeInput)
		want   string
	}{
		{"a node without its histogram", func(in []MergeInput) { in[1].Doc.Tests[0].Nodes[0].Histograms.Response = "" },
			`shard-2.json: node "10.0.0.2:7002" has response times but no histogram`},
		{"a cluster and a single server", func(in []MergeInput) { delete(in[2].Doc.Config, "cluster"); in[2].Doc.Tests[0].Nodes = nil },
			"differ in cluster: true and none"},
	}
	for _, tc := range tests {
		in := clusterShards(t)
		tc.change(in)
		_, err := Merge(in, MergeOptions{})
		if !errors.Is(err, ErrMerge) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
	// A node that answered nothing has neither: nothing to merge.
	in := clusterShards(t)
	n := &in[0].Doc.Tests[0].Nodes[0]
	n.Scheduled, n.Sent, n.Completed, n.Errors = 0, 0, 0, 0
	n.ResponseMs, n.Histograms = nil, NodeHistograms{}
	if _, err := Merge(in, MergeOptions{}); err != nil {
		t.Errorf("a node without samples: %v", err)
	}
}

// TestNodesServiceAndServer: each primary's service times print below its
// response times, and what the primary counted (its own server side) below
// them; both survive the JSON, and the read-back table is the run's.
func TestNodesServiceAndServer(t *testing.T) {
	t.Parallel()
	r := sample()
	keys := uint64(33372)
	node := &serverinfo.Stats{Available: true, Keys: &keys, Commands: map[string]serverinfo.Command{
		"get": {Calls: 4999, Usec: 9998, UsecPerCall: 2}}}
	gone := &serverinfo.Stats{Error: "no reply within 1.5s", Commands: map[string]serverinfo.Command{}}
	r.Nodes = []scheduler.NodeResult{
		{Node: scheduler.Node{Addr: "127.0.0.1:7001", Slots: 8192}, Connections: 1,
			Counts:   scheduler.Counts{Scheduled: 4999, Sent: 4999, Completed: 4999},
			Response: nodeHist(4999, 300), Service: nodeHist(4999, 100)},
		{Node: scheduler.Node{Addr: "127.0.0.1:7002", Slots: 8192}, Connections: 1,
			Counts:   scheduler.Counts{Scheduled: 10, Sent: 10, Completed: 10},
			Response: nodeHist(10, 900), Service: nodeHist(10, 800)},
	}
	st := &serverinfo.Stats{Available: true, Commands: node.Commands, Nodes: map[string]*serverinfo.Stats{"127.0.0.1:7001": node, "127.0.0.1:7002": gone}}
	tt, err := NewTest(r, TestOptions{ID: "get", Server: st})
	if err != nil {
		t.Fatal(err)
	}
	if tt.Nodes[0].Server != node || tt.Nodes[1].Server != gone {
		t.Fatalf("nodes' servers %v %v", tt.Nodes[0].Server, tt.Nodes[1].Server)
	}
	var live strings.Builder
	writeNodes(&live, tt)
	lines := strings.Split(strings.TrimSuffix(live.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines:\n%s", len(lines), live.String())
	}
	s := histo.Summarize(r.Nodes[0].Service)
	if want := strings.Fields(lines[1])[9:]; strings.Join(strings.Fields(lines[2]), " ") != "service (ms) "+strings.Join([]string{millis(s, s.P50), millis(s, s.P99), millis(s, s.P999), millis(s, s.Max)}, " ") ||
		len(want) != 4 {
		t.Errorf("service row %q", lines[2])
	}
	// The service times sit under the response times.
	if len(lines[2]) != len(lines[1]) {
		t.Errorf("columns differ:\n%s\n%s", lines[1], lines[2])
	}
	if !strings.Contains(lines[3], "server ") || !strings.Contains(lines[3], "4999 calls, 2.00 µs/call; 33372 keys after") {
		t.Errorf("server row %q", lines[3])
	}
	if !strings.Contains(lines[6], "not available (no reply within 1.5s)") {
		t.Errorf("server row of a primary not asked %q", lines[6])
	}
	back := input(t, "a.json", craftDoc("open", *tt)).Doc
	if s := back.Tests[0].Nodes[0].Server; s == nil || s.Commands["get"].Calls != 4999 || *s.Keys != keys {
		t.Errorf("the node's server read back as %+v", s)
	}
	var again strings.Builder
	writeNodes(&again, &back.Tests[0])
	if again.String() != live.String() {
		t.Errorf("read back:\n%s\nthe run's:\n%s", again.String(), live.String())
	}
}
