package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
)

// nodeTable is the per-node table of a text report, "" when it has none.
func nodeTable(text string) string { return testrun.Section(text, "  per node") }

// readSavedDoc reads a result document as pacer report and pacer merge do.
func readSavedDoc(t *testing.T, path string) *report.Document {
	t.Helper()
	in, err := report.ReadInput(filepath.Base(path), readFile(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return in.Doc
}

// TestClusterReportRoundTrip: pacer report prints a cluster run's per-node
// table exactly as the run printed it.
func TestClusterReportRoundTrip(t *testing.T) {
	t.Parallel()
	_, port := longCluster(t, "starts a Redis Cluster (TestRunCluster covers -short)")
	js := filepath.Join(t.TempDir(), "a.json")
	code, stdout, stderr := pacer(t, "run", "--cluster", "-p", port, "--rate", "2k", "--duration", "1s",
		"-t", "set", "-r", "10000", "-c", "1", "--json", js)
	if !runOK(code) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	live := nodeTable(stdout)
	// Per primary: its line, its service times and what it counted.
	if strings.Count(live, "\n") != 10 || strings.Count(live, "\n    service (ms) ") != 3 || strings.Count(live, "\n    server ") != 3 {
		t.Fatalf("the run printed no table of 3 nodes:\n%s", stdout)
	}
	code, out, stderr := pacer(t, "report", js)
	if !runOK(code) {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if got := nodeTable(out); got != live {
		t.Errorf("report's node table:\n%s\nthe run's:\n%s", got, live)
	}
}

// TestClusterShardsMerge: the two shards of a cluster run merge into
// nodes whose counts are the shards' sums and whose percentiles are those
// of the shards' node histograms added; pacer report prints them.
func TestClusterShardsMerge(t *testing.T) {
	t.Parallel()
	c, port := longCluster(t, "starts a Redis Cluster (TestRunCluster covers -short)")
	dir := t.TempDir()
	files := make([]string, 2)
	for k := 1; k <= 2; k++ {
		files[k-1] = filepath.Join(dir, "shard-"+strconv.Itoa(k)+".json")
		code, stdout, stderr := pacer(t, "run", "--cluster", "-p", port, "--rate", "2k", "--duration", "1s",
			"-t", "get", "-r", "10000", "-c", "1", "--seed", "5", "--shard", strconv.Itoa(k)+"/2", "-q", "--json", files[k-1])
		if !runOK(code) {
			t.Fatalf("shard %d: exit %d\n%s\n%s", k, code, stdout, stderr)
		}
	}
	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := pacer(t, "merge", files[0], files[1], "-o", merged)
	if !runOK(code) {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	shards := []*report.Document{readSavedDoc(t, files[0]), readSavedDoc(t, files[1])}
	got := readSavedDoc(t, merged).Tests[0].Nodes
	if len(got) != 3 {
		t.Fatalf("%d merged nodes, want 3: %+v", len(got), got)
	}
	var completed uint64
	for _, m := range got {
		want := report.Node{Addr: m.Addr}
		var hs []*hdrhistogram.Histogram
		for _, d := range shards {
			for _, n := range d.Tests[0].Nodes {
				if n.Addr != m.Addr || n.ID != m.ID {
					continue
				}
				if want.ID == "" {
					want.ID, want.Slots, want.Role = n.ID, n.Slots, n.Role
				}
				if want.Server == nil { // a primary's own counts: one shard's, not a sum
					want.Server = n.Server
				}
				want.Connections += n.Connections
				want.Scheduled += n.Scheduled
				want.Sent += n.Sent
				want.Completed += n.Completed
				want.Errors += n.Errors
				want.Timeouts += n.Timeouts
				want.Unsent += n.Unsent
				want.Redirects += n.Redirects
				want.Moved += n.Moved
				want.Ask += n.Ask
				hs = append(hs, reference.Histogram(t, n.Histograms.Response))
			}
		}
		if len(hs) != 2 {
			t.Fatalf("%s: in %d of the 2 shards", m.Addr, len(hs))
		}
		sum, _ := histo.Merge(hs...)
		ws := histo.Summarize(sum)
		ws.Count = 0 // not in the JSON
		if m.ResponseMs == nil || *m.ResponseMs != ws {
			t.Errorf("%s: percentiles %+v, want the added histograms' %+v", m.Addr, m.ResponseMs, ws)
		}
		// (service and receive lag: added by the same merge as response)
		m.ResponseMs, m.ServiceMs, m.ReceiveLagMs, m.Histograms = nil, nil, nil, report.NodeHistograms{}
		if !reflect.DeepEqual(m.Server, want.Server) {
			t.Errorf("%s: server side %+v, want the first shard's %+v", m.Addr, m.Server, want.Server)
		}
		m.Server, want.Server = nil, nil
		if len(m.Intervals) == 0 {
			t.Errorf("%s: the merged node has no intervals", m.Addr)
		}
		m.Intervals = nil // merged as the test's are
		if !reflect.DeepEqual(m, want) {
			t.Errorf("merged node\n%+v, want the shards' sums\n%+v", m, want)
		}
		completed += m.Completed
	}
	if total := readSavedDoc(t, merged).Tests[0].Counts.Completed; completed != total || total == 0 {
		t.Errorf("the merged nodes completed %d, the test %d", completed, total)
	}
	code, out, stderr := pacer(t, "report", merged)
	if !runOK(code) {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	table := nodeTable(out)
	for _, a := range c.Addrs() {
		if !strings.Contains(table, "  "+a+" ") {
			t.Errorf("the merged report's node table lacks %s:\n%s", a, out)
		}
	}
	// A shard with a node written without its histogram cannot merge
	// exactly: refused, exit 2.
	b := readFile(t, files[1])
	h := shards[1].Tests[0].Nodes[0].Histograms.Response
	old := filepath.Join(dir, "old-2.json")
	if err := os.WriteFile(old, []byte(strings.Replace(string(b), `"response": "`+h+`"`, `"response": ""`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := pacer(t, "merge", files[0], old, "-o", merged); code != exitUsage || !strings.Contains(stderr, "no histogram") {
		t.Errorf("a node without its histogram: exit %d, %s", code, stderr)
	}
}
