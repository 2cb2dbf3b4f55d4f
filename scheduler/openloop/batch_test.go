package openloop

import (
	"fmt"
	"testing"

	"github.com/pacer-load/pacer/internal/drivertest"
)

// A wake's commands fill one connection, up to batchPerConn of them,
// before the next in rotation takes over: one write for them, and one read
// of their replies.
func TestAWakeFillsAConnectionUpToItsBatch(t *testing.T) {
	cmd := []byte("*1\r\n$4\r\nPING\r\n")
	srv := drivertest.NewServer(t, len(cmd), func(int) ([]byte, bool) { return nil, false })
	p := &pacer{run: &openRun{}}
	for _, c := range srv.Dial(t, 8, 4096) {
		p.run.lanes = append(p.run.lanes, &lane{c: c})
	}
	p.taken = batchPerConn // a wake starts on the next connection
	var got []int          // commands each connection took, in turn
	last := -1
	for range 3*batchPerConn + 1 {
		i := p.pick()
		if i < 0 {
			t.Fatal("no connection took a command")
		}
		if i != last {
			got = append(got, 0)
			last = i
		}
		got[len(got)-1]++
		p.run.lanes[i].c.Queue(cmd, 0, 0)
	}
	if want := []int{256, 256, 256, 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("commands a connection took in turn: %v, want %v", got, want)
	}
}
