package openloop

import (
	"bytes"
	"context"
	"testing"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

func enc(args ...string) []byte {
	var b []byte
	b = append(b, '*')
	b = append(b, itoa(len(args))...)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = append(b, itoa(len(a))...)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// threeNodes is a slot map of three primaries owning a third each.
func threeNodes() (*cluster.Topology, []scheduler.Node) {
	nodes := []scheduler.Node{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}}
	top := cluster.NewTopology([]cluster.Node{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}})
	top.Assign(0, 5460, 0)
	top.Assign(5461, 10922, 1)
	top.Assign(10923, 16383, 2)
	return top, nodes
}

func TestRouteBySlotAndTag(t *testing.T) {
	top, nodes := threeNodes()
	cl := newClusterRun(context.Background(), &Cluster{Nodes: nodes, PerNode: 1, Topology: top,
		Keys:   []cluster.KeySpec{{First: 1, Last: 1, Step: 1}, {}, {First: 1, Last: -1, Step: 2}},
		Tagged: []bool{false, false, true}}, 3, 3)
	defer cl.stop()
	// By the key's slot.
	for _, key := range []string{"key:1", "foo", "{user1}:x", "key:000000001234"} {
		node, slot, hasKey := cl.route(enc("GET", key), 0, 7, true)
		if !hasKey || slot != cluster.Slot([]byte(key)) || node != top.Owner(slot) {
			t.Errorf("%s: node %d slot %d (%v), want slot %d on %d", key, node, slot, hasKey, cluster.Slot([]byte(key)), top.Owner(cluster.Slot([]byte(key))))
		}
	}
	// Keyless: round-robin.
	var got []int
	for range 4 {
		n, _, hasKey := cl.route(enc("PING"), 1, 0, true)
		if hasKey {
			t.Fatal("PING has a key")
		}
		got = append(got, n)
	}
	if got[0] != 0 || got[1] != 1 || got[2] != 2 || got[3] != 0 {
		t.Errorf("keyless round robin: %v", got)
	}
	// Tagged: every key gets the tag of the request's slot, spread evenly.
	counts := make([]int, 3)
	const n = 30000
	for i := range uint64(n) {
		cmd := enc("MSET", "key:{tag}:1", "v", "key:{tag}:2", "v")
		node, slot, _ := cl.route(cmd, 2, i, true)
		if bytes.Contains(cmd, []byte("{tag}")) {
			t.Fatalf("tag not filled: %q", cmd)
		}
		from, to, _ := conn.ArgBounds(cmd, 1)
		from2, to2, _ := conn.ArgBounds(cmd, 3)
		if cluster.Slot(cmd[from:to]) != slot || cluster.Slot(cmd[from2:to2]) != slot || node != top.Owner(slot) {
			t.Fatalf("request %d: keys %q %q, slot %d node %d", i, cmd[from:to], cmd[from2:to2], slot, node)
		}
		// A resend routes by the filled tag to the same node.
		if again, _, _ := cl.route(cmd, 2|resendFlag, 0, false); again != node {
			t.Fatalf("resend of %q went to %d, not %d", cmd, again, node)
		}
		counts[node]++
	}
	for k, c := range counts {
		if d := float64(c)/float64(n)*3 - 1; d > 0.05 || d < -0.05 {
			t.Errorf("node %d took %d of %d tagged requests", k, c, n)
		}
	}
	// A MOVED updates the map the pacer routes by.
	cl.owner[cluster.Slot([]byte("foo"))] = 2
	if node, _, _ := cl.route(enc("GET", "foo"), 0, 0, true); node != 2 {
		t.Errorf("after MOVED foo goes to %d", node)
	}
	// A refreshed map of other primaries keeps the owners of unknown ones.
	other := cluster.NewTopology([]cluster.Node{{Addr: "b:1"}, {Addr: "z:9"}})
	other.Assign(0, 99, 0)
	other.Assign(100, 199, 1)
	cl.apply(other, nil)
	if cl.owner[5] != 1 || cl.owner[150] != 0 {
		t.Errorf("after a refresh: slot 5 on %d (want 1), slot 150 on %d (want 0, kept)", cl.owner[5], cl.owner[150])
	}
	// With joins, an unknown primary owning slots joins and takes them;
	// one without slots does not join.
	var asked []string
	other = cluster.NewTopology([]cluster.Node{{Addr: "b:1"}, {Addr: "z:9", ID: "zid"}, {Addr: "y:9"}})
	other.Assign(0, 99, 0)
	other.Assign(100, 199, 1)
	cl.apply(other, func(addr, id string) int {
		asked = append(asked, addr+" "+id)
		return cl.addNode(scheduler.Node{Addr: addr, ID: id, Joined: true})
	})
	if len(asked) != 1 || asked[0] != "z:9 zid" || cl.owner[150] != 3 || cl.owner[5] != 1 || cl.node("z:9") != 3 {
		t.Errorf("joins %q; slot 150 on %d (want 3), slot 5 on %d", asked, cl.owner[150], cl.owner[5])
	}
	// Keyless requests skip a joined node that is not reachable yet.
	cl.members[3].joining = true
	seen := map[int]bool{}
	for range 8 {
		n, _, _ := cl.route(enc("PING"), 1, 0, true)
		seen[n] = true
	}
	if seen[3] || len(seen) != 3 {
		t.Errorf("keyless requests went to %v", seen)
	}
}

// TestRouteTagByKey: with TagByKey, a tagged key gets the tag of its own
// name, whatever the request's index: one key, one slot (the key pacer
// fill --cluster wrote); different keys spread over the nodes.
func TestRouteTagByKey(t *testing.T) {
	top, nodes := threeNodes()
	cl := newClusterRun(context.Background(), &Cluster{Nodes: nodes, PerNode: 1, Topology: top,
		Keys: oneKey, Tagged: []bool{true}, TagByKey: []bool{true}}, 3, 1)
	defer cl.stop()
	counts := make([]int, 3)
	for i := range uint64(3000) {
		key := "key:{tag}:" + itoa(100000000000+int(i%1000))
		cmd := enc("GET", key)
		node, slot, hasKey := cl.route(cmd, 0, i, true)
		want := cluster.TagSlot([]byte(key))
		got, _ := conn.Arg(cmd, 1)
		if !hasKey || slot != want || cluster.Slot(got) != want || node != top.Owner(want) {
			t.Fatalf("%s (request %d): %q on slot %d node %d, want slot %d", key, i, got, slot, node, want)
		}
		counts[node]++
	}
	for k, c := range counts {
		if c < 800 {
			t.Errorf("node %d took %d of 3000", k, c)
		}
	}
}
