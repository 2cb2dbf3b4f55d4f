package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/redistest"
)

// TestFindPrimaries: --cluster finds the three primaries, reads each
// one's CONFIG for the header, and gives each a thread unless --threads
// was given; the header lists them as redis-benchmark does.
func TestFindPrimaries(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tgt := &endpoint.Target{Options: conn.Options{Network: "tcp", Addr: c.Addr()}, Cluster: true}
	for _, threads := range []int{0, 2} {
		cfg := &Config{}
		cfg.Info.Threads = threads
		header, err := cfg.FindPrimaries(ctx, tgt)
		if err != nil {
			t.Fatal(err)
		}
		want := threads
		if want == 0 {
			want = 3
		}
		if cfg.Primaries == nil || len(cfg.Primaries.Nodes) != 3 || len(cfg.Info.Cluster) != 3 || cfg.Info.Threads != want {
			t.Errorf("--threads %d: primaries %v, configs %d, threads %d; want 3, 3, %d", threads, cfg.Primaries, len(cfg.Info.Cluster), cfg.Info.Threads, want)
		}
		if !strings.HasPrefix(header, "Cluster has 3 master nodes:\n\nMaster 0: ") {
			t.Errorf("header %q", header)
		}
	}
}
