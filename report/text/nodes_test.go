package text

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/verdict"
)

// TestNodesServiceAndServer: each primary's service times print below its
// response times, and what the primary counted (its own server side) below
// them; both survive the JSON, and the read-back table is the run's.
func TestNodesServiceAndServer(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	keys := uint64(33372)
	node := &serverinfo.Stats{Available: true, Keys: &keys, Commands: map[string]serverinfo.Command{
		"get": {Calls: 4999, Usec: 9998, UsecPerCall: 2}}}
	gone := &serverinfo.Stats{Error: "no reply within 1.5s", Commands: map[string]serverinfo.Command{}}
	r.Nodes = []scheduler.NodeResult{
		{Node: scheduler.Node{Addr: "127.0.0.1:7001", Slots: 8192}, Connections: 1,
			Counts:   scheduler.Counts{Scheduled: 4999, Sent: 4999, Completed: 4999},
			Response: resulttest.NodeHist(4999, 300), Service: resulttest.NodeHist(4999, 100)},
		{Node: scheduler.Node{Addr: "127.0.0.1:7002", Slots: 8192}, Connections: 1,
			Counts:   scheduler.Counts{Scheduled: 10, Sent: 10, Completed: 10},
			Response: resulttest.NodeHist(10, 900), Service: resulttest.NodeHist(10, 800)},
	}
	st := &serverinfo.Stats{Available: true, Commands: node.Commands, Nodes: map[string]*serverinfo.Stats{"127.0.0.1:7001": node, "127.0.0.1:7002": gone}}
	tt, _, err := verdict.NewTest(r, report.TestOptions{ID: "get", Server: st}, verdict.SLO{})
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
	back := reporttest.Input(t, "a.json", report.SyntheticDocument("open", *tt)).Doc
	if s := back.Tests[0].Nodes[0].Server; s == nil || s.Commands["get"].Calls != 4999 || *s.Keys != keys {
		t.Errorf("the node's server read back as %+v", s)
	}
	var again strings.Builder
	writeNodes(&again, &back.Tests[0])
	if again.String() != live.String() {
		t.Errorf("read back:\n%s\nthe run's:\n%s", again.String(), live.String())
	}
}
