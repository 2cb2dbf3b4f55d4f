package cluster_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
)

func TestClusterDiscover(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	top, err := cluster.Discover(ctx, conn.Options{Addr: c.Addrs()[1]})
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Primaries) != 3 || !top.Covered() {
		t.Fatalf("primaries %+v, covered %v", top.Primaries, top.Covered())
	}
	total := 0
	for i, n := range top.Primaries {
		if top.Index(n.Addr) != i || len(n.ID) != 40 {
			t.Errorf("primary %d: %+v", i, n)
		}
		total += top.SlotsOf(i)
	}
	if total != cluster.Slots {
		t.Errorf("slots add up to %d", total)
	}
	for _, a := range c.Addrs() {
		if top.Index(a) < 0 {
			t.Errorf("%s is not a primary of %+v", a, top.Primaries)
		}
	}
	// The owner Discover names is the node that serves the key.
	owner := top.Primaries[top.Owner(cluster.Slot([]byte("foo")))].Addr
	for _, s := range c.Nodes {
		_, err := s.Do("SET", "foo", "1")
		if (s.Addr == owner) != (err == nil) {
			t.Errorf("SET foo on %s (owner %s): %v", s.Addr, owner, err)
		}
	}
}

func TestClusterDiscoverNotACluster(t *testing.T) {
	s := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cluster.Discover(ctx, conn.Options{Addr: s.Addr})
	if err == nil || !strings.Contains(err.Error(), s.Addr+" is not a cluster: ") {
		t.Fatalf("err %v", err)
	}
}

// TestClusterMoveSlots: a key of a slot being moved gets -ASK (to the
// target) from its old owner, and -MOVED once the move is done.
func TestClusterMoveSlots(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	top, err := cluster.Discover(ctx, conn.Options{Addr: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	from, to := c.Nodes[2], c.Nodes[0]
	first := -1 // the lowest slot of from: MoveSlots moves it first
	for s := range cluster.Slots {
		if top.Primaries[top.Owner(uint16(s))].Addr == from.Addr {
			first = s
			break
		}
	}
	key := ""
	for i := 0; key == ""; i++ {
		if k := "k" + strconv.Itoa(i); int(cluster.Slot([]byte(k))) == first {
			key = k
		}
	}
	if _, err := from.Do("SET", key, "v"); err != nil {
		t.Fatal(err)
	}
	redirect := func(s *redistest.Server) (cluster.Redirect, bool) {
		_, err := s.Do("GET", key)
		if err == nil {
			return cluster.Redirect{}, false
		}
		return cluster.ParseRedirect([]byte(err.Error()))
	}
	var during cluster.Redirect
	var asked bool
	c.Migrating = func(slot int) {
		if slot == first {
			during, asked = redirect(from)
		}
	}
	if err := c.MoveSlots(ctx, 2, 0, 2); err != nil {
		t.Fatal(err)
	}
	want := cluster.Redirect{Ask: true, Slot: uint16(first), Addr: to.Addr}
	if !asked || during != want {
		t.Errorf("during the move: %+v %v, want %+v", during, asked, want)
	}
	after, ok := redirect(from)
	want.Ask = false
	if !ok || after != want {
		t.Errorf("after the move: %+v %v, want %+v", after, ok, want)
	}
	if v, err := to.Do("GET", key); err != nil || v != "v" {
		t.Errorf("GET on the new owner: %q, %v", v, err)
	}
	top, err = cluster.Discover(ctx, conn.Options{Addr: c.Addrs()[1]})
	if err != nil {
		t.Fatal(err)
	}
	if got := top.Primaries[top.Owner(uint16(first))].Addr; got != to.Addr || !top.Covered() {
		t.Errorf("slot %d owned by %s after the move, want %s", first, got, to.Addr)
	}
}
