package scheduler

import (
	"sync"
	"testing"
)

// TestNodeRecordersAreMadeAtTheFirstReply: a node's recorders exist once
// a reader records into them, the same for every reader; a node that
// recorded nothing has no histograms.
func TestNodeRecordersAreMadeAtTheFirstReply(t *testing.T) {
	var n NodeRecorders
	if r, s, v := n.Snapshot(); r != nil || s != nil || v != nil {
		t.Fatal("histograms before any reply")
	}
	var wg sync.WaitGroup
	got := make([]*NodeHists, 8)
	for i := range got {
		wg.Go(func() { got[i] = n.Get() })
	}
	wg.Wait()
	for _, h := range got {
		if h != got[0] {
			t.Fatal("two readers got different recorders")
		}
	}
	got[0].Response.Record(1000)
	if r, _, _ := n.Snapshot(); r == nil || r.TotalCount() != 1 {
		t.Errorf("snapshot %v", r)
	}
}
