package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sweepClusterDoc is what the cluster sweep tests read of a document.
type sweepClusterDoc struct {
	Config map[string]any `json:"config"`
	Tests  []struct {
		Counts struct {
			Scheduled, Sent, Completed, Errors, Timeouts, Unsent uint64
		} `json:"counts"`
		Connections int `json:"connections"`
		Step        *struct {
			Index      int     `json:"index"`
			TargetRate float64 `json:"target_rate"`
		} `json:"step"`
		Nodes []struct {
			Addr        string `json:"addr"`
			Connections int    `json:"connections"`
			Sent        uint64 `json:"sent"`
			Completed   uint64 `json:"completed"`
			Errors      uint64 `json:"errors"`
			Timeouts    uint64 `json:"timeouts"`
		} `json:"nodes"`
	} `json:"tests"`
	Sweep *struct {
		Mode   string `json:"mode"`
		Steps  int    `json:"steps"`
		Points []struct {
			Clients    int     `json:"clients"`
			Throughput float64 `json:"throughput"`
		} `json:"points"`
	} `json:"sweep"`
}

// TestSweepClusterOpen: an open sweep of two steps against three
// primaries, -c 2 to each, on one timeline per step: no step has an
// error, every primary served requests in every step, and each step's
// JSON test and text carry the per-node results.
func TestSweepClusterOpen(t *testing.T) {
	t.Parallel()
	c, _ := longCluster(t, "starts a Redis Cluster (TestRunCluster covers -short)")
	js := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := pacer(t, "sweep", "--cluster", "-p", strconv.Itoa(c.Nodes[1].Port), "--rates", "2k,4k",
		"--step-duration", "500ms", "--settle", "200ms", "-c", "2", "-t", "set", "-r", "10000", "--json", js)
	if !runOK(code) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	d := readJSON[sweepClusterDoc](t, js)
	if d.Sweep == nil || d.Sweep.Mode != "open" || d.Sweep.Steps != 2 || len(d.Tests) != 2 || d.Config["cluster"] != true {
		t.Fatalf("sweep %+v, %d tests, config %v", d.Sweep, len(d.Tests), d.Config)
	}
	for i, tt := range d.Tests {
		cnt := tt.Counts
		if tt.Step == nil || tt.Step.Index != i || cnt.Completed == 0 || cnt.Errors+cnt.Timeouts != 0 ||
			cnt.Scheduled != cnt.Completed+cnt.Errors+cnt.Timeouts+cnt.Unsent || tt.Connections != 6 {
			t.Errorf("step %d: %+v, counts %+v, %d connections", i, tt.Step, cnt, tt.Connections)
		}
		if len(tt.Nodes) != 3 {
			t.Fatalf("step %d: nodes %+v", i, tt.Nodes)
		}
		var completed uint64
		for _, n := range tt.Nodes {
			if n.Completed == 0 || n.Errors+n.Timeouts != 0 || n.Connections != 2 {
				t.Errorf("step %d: node %+v", i, n)
			}
			completed += n.Completed
		}
		if completed != cnt.Completed {
			t.Errorf("step %d: the nodes completed %d, the step %d", i, completed, cnt.Completed)
		}
	}
	if !strings.Contains(stdout, "2 connections per primary") || strings.Count(stdout, "per node") != 2 {
		t.Errorf("no per-node table per step:\n%s", stdout)
	}
	for _, a := range c.Addrs() {
		if strings.Count(stdout, "  "+a+" ") != 2 {
			t.Errorf("the per-node tables do not list %s in each step:\n%s", a, stdout)
		}
	}
}

// TestSweepClusterClosed: a closed sweep over -c 3,6 runs bench
// --cluster's loop at each point (client i on primary i mod 3): both
// points measured, every primary in each, no error. A custom key without
// {tag} is refused up front: its connection's primary could not take it.
func TestSweepClusterClosed(t *testing.T) {
	t.Parallel()
	_, port := longCluster(t, "starts a Redis Cluster (TestBenchCluster covers -short)")
	js := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := pacer(t, "sweep", "--cluster", "-p", port, "--closed", "-c", "3,6", "--step-duration", "300ms",
		"-t", "set", "-r", "10000", "--json", js)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	d := readJSON[sweepClusterDoc](t, js)
	if d.Sweep == nil || d.Sweep.Mode != "closed" || len(d.Sweep.Points) != 2 || len(d.Tests) != 2 {
		t.Fatalf("sweep %+v, %d tests", d.Sweep, len(d.Tests))
	}
	for i, want := range []int{3, 6} {
		p, tt := d.Sweep.Points[i], d.Tests[i]
		if p.Clients != want || p.Throughput <= 0 || tt.Counts.Completed == 0 || tt.Counts.Errors+tt.Counts.Timeouts != 0 {
			t.Errorf("point %d: %+v, counts %+v", i, p, tt.Counts)
		}
		if len(tt.Nodes) != 3 {
			t.Fatalf("point %d: nodes %+v", i, tt.Nodes)
		}
		for _, n := range tt.Nodes {
			if n.Completed == 0 || n.Errors != 0 || n.Connections != want/3 {
				t.Errorf("point %d: node %+v", i, n)
			}
		}
	}
	if strings.Count(stdout, "per node") != 2 {
		t.Errorf("no per-node table per point:\n%s", stdout)
	}
	code, _, stderr = pacer(t, "sweep", "--cluster", "-p", port, "--closed", "-c", "3", "--step-duration", "100ms",
		"-r", "100", "--", "GET", "key:__rand_int__")
	if code != exitUsage || !strings.Contains(stderr, "{tag}") {
		t.Errorf("a key without {tag}: exit %d, %q", code, stderr)
	}
}
