package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
)

type clusterDoc struct {
	Tests []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Counts struct {
			Sent, Completed, Errors uint64
		} `json:"counts"`
		Nodes []struct {
			Addr        string `json:"addr"`
			ID          string `json:"id"`
			Slots       int    `json:"slots"`
			Connections int    `json:"connections"`
			Sent        uint64 `json:"sent"`
			Completed   uint64 `json:"completed"`
			Errors      uint64 `json:"errors"`
			Redirects   uint64 `json:"redirects"`
			Response    *struct {
				P50 float64 `json:"p50"`
			} `json:"response"`
		} `json:"nodes"`
	} `json:"tests"`
}

func readClusterDoc(t *testing.T, path string) clusterDoc { return readJSON[clusterDoc](t, path) }

// TestBenchCluster: bench --cluster runs redis-benchmark's tests against a
// 3-primary cluster with the same names as without, no error, and every
// primary takes its share; the report lists the primaries first.
func TestBenchCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	dir := t.TempDir()
	js := filepath.Join(dir, "c.json")
	port := strconv.Itoa(c.Nodes[1].Port)
	code, stdout, stderr := pacer(t, "bench", "--cluster", "-p", port, "-t", "set,get", "-n", "3000", "-c", "6", "-P", "4", "-q", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "Cluster has 3 master nodes:\n\nMaster 0: ") {
		t.Errorf("stdout does not start with the primaries:\n%s", stdout)
	}
	for _, a := range c.Addrs() {
		if !strings.Contains(stdout, " "+a+"\n") {
			t.Errorf("stdout does not list %s:\n%s", a, stdout)
		}
	}
	cl := readClusterDoc(t, js)
	plain := redistest.Start(t)
	js2 := filepath.Join(dir, "p.json")
	if code, o, e := pacer(t, "bench", "-p", plain.PortString(), "-t", "set,get", "-n", "3000", "-c", "6", "-q", "--json", js2); code != 0 {
		t.Fatalf("without --cluster: exit %d\n%s\n%s", code, o, e)
	}
	pl := readClusterDoc(t, js2)
	if len(cl.Tests) != 2 || len(pl.Tests) != 2 {
		t.Fatalf("tests: %d with --cluster, %d without", len(cl.Tests), len(pl.Tests))
	}
	for i, tt := range cl.Tests {
		if tt.ID != pl.Tests[i].ID || tt.Name != pl.Tests[i].Name {
			t.Errorf("test %d: %s %q with --cluster, %s %q without", i, tt.ID, tt.Name, pl.Tests[i].ID, pl.Tests[i].Name)
		}
		if tt.Counts.Completed != 3000 || tt.Counts.Errors != 0 {
			t.Errorf("%s: %+v", tt.Name, tt.Counts)
		}
		if len(tt.Nodes) != 3 {
			t.Fatalf("%s: nodes %+v", tt.Name, tt.Nodes)
		}
		var sum uint64
		slots := 0
		for _, n := range tt.Nodes {
			if n.Completed == 0 || n.Errors != 0 || n.Redirects != 0 || n.Connections != 2 || n.Response == nil || len(n.ID) != 40 {
				t.Errorf("%s: node %+v", tt.Name, n)
			}
			sum += n.Completed
			slots += n.Slots
		}
		if sum != tt.Counts.Completed || slots != 16384 {
			t.Errorf("%s: nodes completed %d of %d, own %d slots", tt.Name, sum, tt.Counts.Completed, slots)
		}
	}
	// The keys landed on their own primaries: each holds some.
	for _, s := range c.Nodes {
		n, err := s.Do("DBSIZE")
		if err != nil || n == "0" {
			t.Errorf("%s: DBSIZE %s %v", s.Addr, n, err)
		}
	}
}

// TestBenchClusterRedirects: every slot of one primary is being migrated
// (MIGRATING there, IMPORTING on another), so that primary answers -ASK for
// every new key. Those replies count as errors and redirects of its node,
// never end the run, and make bench fetch the slot map again.
func TestBenchClusterRedirects(t *testing.T) {
	t.Parallel()
	c, _ := longCluster(t, "starts a Redis Cluster (TestBenchCluster covers -short)")
	src, dst := c.Nodes[0], c.Nodes[1]
	if err := c.MarkMigrating(0, 1); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(t.TempDir(), "m.json")
	code, stdout, stderr := pacer(t, "bench", "--cluster", "-p", strconv.Itoa(dst.Port), "-t", "set", "-n", "3000",
		"-c", "3", "-r", "1000", "-q", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	d := readClusterDoc(t, js)
	tt := d.Tests[0]
	if tt.Counts.Completed+tt.Counts.Errors != 3000 {
		t.Errorf("counts %+v", tt.Counts)
	}
	for _, n := range tt.Nodes {
		want := uint64(0)
		if n.Addr == src.Addr {
			want = n.Sent // every request to the migrating primary
		}
		if n.Redirects != want || n.Errors != want || n.Sent == 0 {
			t.Errorf("node %s: sent %d, redirects %d, errors %d; want %d", n.Addr, n.Sent, n.Redirects, n.Errors, want)
		}
	}
	if !strings.Contains(stderr, "WARNING: Cluster slots configuration changed, fetching new one...") {
		t.Errorf("no refresh said:\n%s", stderr)
	}
}
