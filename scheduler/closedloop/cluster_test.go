package closedloop

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
)

// TestClosedClusterRecordsOnlyNodesWithConnections: a closed run with two
// connections against a map of 1,000 primaries makes histograms for the two
// primaries the connections talk to, not for all (two recorders and their
// snapshots for each cost over 1 MB: 1,000 primaries took 1.4 GB).
func TestClosedClusterRecordsOnlyNodesWithConnections(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	nodes := make([]scheduler.Node, 1000)
	for i := range nodes {
		nodes[i] = scheduler.Node{Addr: "node-" + strconv.Itoa(i) + ":7000", Slots: 16}
	}
	var res *scheduler.Result
	var err error
	alloc := testrun.Allocated(func() {
		res, err = Run(context.Background(), srv.Dial(t, 2, 0), Config{
			Requests: 200, NewCommands: func(int) scheduler.Commands { return cmds },
			Cluster: &Cluster{Nodes: nodes, Of: []int{3, 700}, Slot: func(int) uint16 { return 0 }},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MB allocated", alloc>>20)
	if alloc > 200<<20 {
		t.Errorf("%d MB allocated for a run on 2 of 1,000 primaries", alloc>>20)
	}
	if len(res.Nodes) != 1000 {
		t.Fatalf("%d node results", len(res.Nodes))
	}
	var done uint64
	for k, nr := range res.Nodes {
		talked := k == 3 || k == 700
		if (nr.Response != nil) != talked || (nr.Receive != nil) != talked || nr.Connections != map[bool]int{true: 1}[talked] {
			t.Errorf("node %d: connections %d, histograms %v", k, nr.Connections, nr.Response != nil)
		}
		done += nr.Counts.Completed
		if talked && nr.Response.TotalCount() != int64(nr.Counts.Completed) {
			t.Errorf("node %d: %d samples for %d completed", k, nr.Response.TotalCount(), nr.Counts.Completed)
		}
	}
	if done != 200 {
		t.Errorf("nodes completed %d of 200", done)
	}
}

// TestClosedClusterMovedToNoPort: in a closed cluster run, "-MOVED 1
// :99999" ends the run with a protocol error naming the reply, not as an
// ordinary redirect the run refreshes its map for and keeps meeting.
func TestClosedClusterMovedToNoPort(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	moved := []byte("-MOVED 1 :99999\r\n")
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return moved, false })
	_, err := Run(context.Background(), srv.Dial(t, 1, 0), Config{
		Requests: 50, NewCommands: func(int) scheduler.Commands { return cmds },
		Cluster: &Cluster{Nodes: []scheduler.Node{{Addr: "127.0.0.1:7000", Slots: 16384}}, Of: []int{0},
			Slot: func(int) uint16 { return 0 }},
	})
	if err == nil || !errors.Is(err, conn.ErrProtocol) || !strings.Contains(err.Error(), "-MOVED 1 :99999") {
		t.Errorf("err %v: want a protocol error naming the reply", err)
	}
}
