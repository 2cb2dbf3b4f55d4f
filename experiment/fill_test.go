package experiment

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// fillRecipe is the fill's one command for n keys.
func fillRecipe(t *testing.T, command string, n uint64) *scenarios.Recipe {
	t.Helper()
	custom, err := scenarios.ParseCustom(command)
	if err != nil {
		t.Fatal(err)
	}
	r, err := scenarios.BuildRecipe("", []scenarios.Custom{custom}, scenarios.Options{Sizes: scenarios.FixedSize(8), Keyspace: n})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFillServer: every key once, over all the connections, watched, with
// the server's side.
func TestFillServer(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	tgt := &endpoint.Target{Options: conn.Options{Network: "tcp", Addr: srv.Addr}}
	watched := 0
	e := &Env{Target: tgt, Server: endpoint.AskServer(ctx, tgt.Options, nil, nil),
		Watch: func(w Watched) (func(*scheduler.Live), func()) {
			if w.Name != "fill" || w.Mode != "closed" {
				t.Errorf("watched %+v", w)
			}
			watched++
			return nil, func() {}
		}}
	const n = 1000
	res, st, err := e.Fill(ctx, FillConfig{Recipe: fillRecipe(t, "SET key:__key__ __data__", n), Keys: n, Seed: 1, Conns: 3, Pipeline: 16})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "fill" || res.Mode != "closed" || res.Counts.Completed != n || res.Connections != 3 || st == nil || watched != 1 {
		t.Errorf("result %s %s, %+v, %d connections, stats %v, watched %d", res.Name, res.Mode, res.Counts, res.Connections, st, watched)
	}
	if got, err := srv.Do("DBSIZE"); err != nil || got != strconv.Itoa(n) {
		t.Errorf("DBSIZE %q, %v", got, err)
	}
	for _, i := range []int{0, n - 1} {
		if got, err := srv.Do("STRLEN", fmt.Sprintf("key:%012d", i)); err != nil || got != "8" {
			t.Errorf("key %d: STRLEN %q, %v", i, got, err)
		}
	}
}

// TestFillCluster: each primary writes the keys of its slots, all of them
// once; the result sums the primaries' and holds each one's.
func TestFillCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	ctx := context.Background()
	e := &Env{Target: &endpoint.Target{Options: conn.Options{Network: "tcp", Addr: c.Addr()}, Cluster: true},
		Watch: func(Watched) (func(*scheduler.Live), func()) {
			t.Error("a cluster's fill is watched")
			return nil, func() {}
		}}
	const n = 600
	res, _, err := e.Fill(ctx, FillConfig{Recipe: fillRecipe(t, "SET key:__key__ __data__", n), Keys: n, Seed: 1, Conns: 2, Pipeline: 8})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Completed != n || len(res.Nodes) != 3 || res.Connections != 6 || res.TargetGone {
		t.Fatalf("completed %d, %d nodes, %d connections, target gone %v", res.Counts.Completed, len(res.Nodes), res.Connections, res.TargetGone)
	}
	var sum uint64
	for _, node := range res.Nodes {
		s := c.Nodes[slices.Index(c.Addrs(), node.Addr)]
		got, err := s.Do("DBSIZE")
		if err != nil || got != strconv.FormatUint(node.Counts.Completed, 10) {
			t.Errorf("%s: DBSIZE %q (%v), wrote %d", node.Addr, got, err, node.Counts.Completed)
		}
		sum += node.Counts.Completed
	}
	if sum != n {
		t.Errorf("the primaries wrote %d keys, want %d", sum, n)
	}
	// A key that is not the fill's sequence cannot be planned.
	_, err = e.PlanFill(ctx, FillConfig{Recipe: fillRecipe(t, "SET k:__rand_int__ __key__", n), Keys: n, Conns: 1, Pipeline: 1})
	if !usage.Is(err) || !strings.Contains(err.Error(), "holds __rand_int__") {
		t.Errorf("__rand_int__ key: %v", err)
	}
}

// A fill's document says what it wrote: the keys 0 … Keys-1 once each, in
// order, as its one test, with its connections, pipeline and seed.
func TestFillRunConfig(t *testing.T) {
	fc, err := NewFill(FillCommand, 500, scenarios.FixedSize(8), 4, 16)
	if err != nil {
		t.Fatal(err)
	}
	fc.Seed = 7
	dial := conn.Options{Addr: "127.0.0.1:6379"}
	rc := fc.RunConfig(dial, scenarios.FixedSize(8))
	if rc.Target != dial.Addr || rc.Conns != 4 || rc.Pipeline != 16 || rc.Seed != 7 {
		t.Errorf("target %q conns %d pipeline %d seed %d, want 127.0.0.1:6379, 4, 16, 7", rc.Target, rc.Conns, rc.Pipeline, rc.Seed)
	}
	if rc.Keyspace != 500 || rc.Requests != 500 || !slices.Equal(rc.Tests, []string{FillID}) {
		t.Errorf("keyspace %d requests %d tests %v, want 500, 500, [%s]", rc.Keyspace, rc.Requests, rc.Tests, FillID)
	}
	if want := scenarios.NewSequential(500).String(); rc.KeyDist == nil || rc.KeyDist.String() != want {
		t.Errorf("key distribution %v, want %s", rc.KeyDist, want)
	}
}
