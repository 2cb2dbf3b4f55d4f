package experiment

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// infoField reads one field of a server's INFO section.
func infoField(t *testing.T, s *redistest.Server, section, field string) uint64 {
	t.Helper()
	info, err := s.Do("INFO", section)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// TestFillClusterIsReadBack: fill --cluster's default keys are the GET
// test's keys in a cluster ("key:{tag}:N", the tag from the key's name),
// so a run of GET over the filled keyspace hits every time; the fill says
// what every primary holds (their sum, each one's in Nodes), not the
// seed's share.
func TestFillClusterIsReadBack(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tgt := &endpoint.Target{Options: conn.Options{Network: "tcp", Addr: c.Addr()}, Cluster: true}
	e := &Env{Target: tgt, Server: endpoint.AskServer(ctx, tgt.Options, nil, nil)}
	const n = 2000
	res, st, err := e.Fill(ctx, FillConfig{Recipe: fillRecipe(t, FillTemplate("", false, true), n), Keys: n, Seed: 1, Conns: 2, Pipeline: 16})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Completed != n {
		t.Fatalf("completed %d", res.Counts.Completed)
	}
	if st == nil || st.Keys == nil || *st.Keys != n || len(st.Nodes) != 3 {
		t.Fatalf("the server's side: %+v", st)
	}
	var sets uint64
	for _, s := range c.Nodes {
		ns := st.Nodes[s.Addr]
		dbsize, _ := s.Do("DBSIZE")
		if ns == nil || ns.Keys == nil || strconv.FormatUint(*ns.Keys, 10) != dbsize || ns.Commands["set"].Calls == 0 {
			t.Errorf("%s: %+v, DBSIZE %s", s.Addr, ns, dbsize)
		}
		sets += ns.Commands["set"].Calls
	}
	if sets != n || st.Commands["set"].Calls != n {
		t.Errorf("SET calls: %d over the primaries, %d summed; want %d", sets, st.Commands["set"].Calls, n)
	}
	// The GET test reads those keys: no miss.
	opts := scenarios.Options{Keyspace: n, Cluster: true}
	recipe, err := scenarios.BuildRecipe("get:1", nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := endpoint.ClusterKeys(ctx, tgt.Options, recipe)
	if err != nil {
		t.Fatal(err)
	}
	test := Test{ID: "get", Title: "GET", Recipe: recipe, Stream: func(seed uint64) (scheduler.Commands, error) {
		m, err := recipe.Build()
		if err != nil {
			return nil, err
		}
		return scenarios.NewMixStream(m, seed, scenarios.Uniform{N: n}), nil
	}}
	var missesBefore, hitsBefore uint64
	for _, s := range c.Nodes {
		missesBefore += infoField(t, s, "stats", "keyspace_misses")
		hitsBefore += infoField(t, s, "stats", "keyspace_hits")
	}
	const gets = 3000
	run, rst, err := e.RunOpen(ctx, Open{Test: test, Name: "GET", Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(3000)},
		Config: openloop.Config{Requests: gets}, Conns: 1, Keys: keys, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if run.Counts.Completed != gets {
		t.Fatalf("GET: %+v", run.Counts)
	}
	var misses, hits uint64
	for _, s := range c.Nodes {
		misses += infoField(t, s, "stats", "keyspace_misses")
		hits += infoField(t, s, "stats", "keyspace_hits")
	}
	if misses != missesBefore || hits-hitsBefore != gets {
		t.Errorf("GET over the filled keys: %d hits, %d misses, want %d hits", hits-hitsBefore, misses-missesBefore, gets)
	}
	if rst == nil || rst.Commands["get"].Calls != gets || len(rst.Nodes) != 3 {
		t.Errorf("the run's server side: %+v", rst)
	}
}
