package endpoint

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/serverinfo"
)

func keys(n uint64) *uint64 { return &n }

// TestSumNodes: a cluster's server side is its primaries' sum (commands,
// keys when every primary counted them), each one's kept by address; a
// primary that could not be asked is named and left out of the sum.
func TestSumNodes(t *testing.T) {
	a := &serverinfo.Stats{Available: true, Keys: keys(10), Commands: map[string]serverinfo.Command{"get": {Calls: 4, Usec: 8}}}
	b := &serverinfo.Stats{Available: true, Keys: keys(5), Commands: map[string]serverinfo.Command{"get": {Calls: 6, Usec: 2}, "set": {Calls: 1, Usec: 1}}}
	sum := sumNodes([]string{"a:1", "b:1"}, []*serverinfo.Stats{a, b})
	if !sum.Available || sum.Error != "" || *sum.Keys != 15 || sum.Commands["get"].Calls != 10 || sum.Commands["get"].Usec != 10 ||
		sum.Commands["get"].UsecPerCall != 1 || sum.Commands["set"].Calls != 1 || sum.Nodes["a:1"] != a || sum.Nodes["b:1"] != b {
		t.Errorf("sum %+v", sum)
	}
	gone := &serverinfo.Stats{Error: "could not ask the server: refused", Commands: map[string]serverinfo.Command{}}
	sum = sumNodes([]string{"a:1", "c:1"}, []*serverinfo.Stats{a, gone})
	if !sum.Available || sum.Keys != nil || sum.Commands["get"].Calls != 4 || !strings.Contains(sum.Error, "1 of 2 primaries not counted (c:1: could not ask") {
		t.Errorf("sum with a primary missing: %+v", sum)
	}
	sum = sumNodes([]string{"c:1"}, []*serverinfo.Stats{gone})
	if sum.Available {
		t.Errorf("no primary counted, yet available: %+v", sum)
	}
}
