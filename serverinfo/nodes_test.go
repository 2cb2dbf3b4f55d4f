package serverinfo

import "testing"

// TestMergeKeepsNodes: pooling two runs of a cluster test (bench -l) adds
// each primary's own stats too.
func TestMergeKeepsNodes(t *testing.T) {
	run := func(calls uint64) *Stats {
		n := &Stats{Available: true, Commands: map[string]Command{"get": {Calls: calls, Usec: calls}}}
		return &Stats{Available: true, Commands: map[string]Command{"get": {Calls: calls, Usec: calls}}, Nodes: map[string]*Stats{"a:1": n}}
	}
	s := run(2)
	first := s.Nodes["a:1"]
	s.Merge(run(3))
	if s.Commands["get"].Calls != 5 || s.Nodes["a:1"].Commands["get"].Calls != 5 || first.Commands["get"].Calls != 5 {
		t.Errorf("merged %+v, node %+v", s, s.Nodes["a:1"])
	}
	var empty Stats
	empty.Merge(run(1))
	if empty.Nodes["a:1"] == nil || empty.Nodes["a:1"].Commands["get"].Calls != 1 {
		t.Errorf("merged into nothing: %+v", empty.Nodes)
	}
}
