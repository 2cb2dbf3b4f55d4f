package replay

import (
	"testing"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/verdict"
)

// TestJudge: a replay's test is "replay", shows every percentile, is
// judged by the SLO, and carries the server's counts except in a Redis
// Cluster.
func TestJudge(t *testing.T) {
	slo, err := verdict.ParseSLO("p99<=1h")
	if err != nil {
		t.Fatal(err)
	}
	st := &serverinfo.Stats{}
	for _, cluster := range []bool{false, true} {
		tt, j, err := Judge(resulttest.Sample(), st, Config{Cluster: cluster}, slo)
		if err != nil {
			t.Fatal(err)
		}
		if tt.ID != ID || tt.ResponsePercentiles == nil || tt.SLO == nil || j.Outcome != verdict.Pass {
			t.Errorf("cluster %v: id %q, percentiles %v, slo %v, outcome %v", cluster, tt.ID, tt.ResponsePercentiles != nil, tt.SLO, j.Outcome)
		}
		if (tt.Server != nil) == cluster {
			t.Errorf("cluster %v: the server's counts %v", cluster, tt.Server)
		}
	}
	if got := Name("/traces/monitor.log"); got != "replay monitor.log" {
		t.Errorf("Name %q", got)
	}
}
