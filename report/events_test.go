package report

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/scheduler"
)

// TestUnavailableClause: --slo unavailable<=… judges the longest window
// of any event, writes or reads; a test without events passes it.
func TestUnavailableClause(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec string
		pass bool
		r    *scheduler.Result
	}{
		{"unavailable<=200ms", true, resulttest.WithTopology()},
		{"unavailable<100ms", false, resulttest.WithTopology()},
		{"unavailable<=0s", true, resulttest.Sample()},
	} {
		res := mustCheck(t, mustSLO(t, c.spec, 0), c.r)
		if res.Pass != c.pass {
			t.Errorf("%s: pass %v, want %v: %+v", c.spec, res.Pass, c.pass, res.Violations)
		}
		if c.r.Events != nil {
			cr := res.Clauses[0]
			if cr.Observed == nil || *cr.Observed != 0.12 || cr.Unit != "s" {
				t.Errorf("%s: observed %v %s, want the 0.120 s window", c.spec, cr.Observed, cr.Unit)
			}
		}
	}
	if !strings.Contains(mustCheck(t, mustSLO(t, "unavailable<100ms", 0), resulttest.WithTopology()).Violations[0], "unavailable 0.120 s >= 0.100 s") {
		t.Error("the violation does not word the window")
	}
	if _, err := parseSLO("unavailable<=x"); err == nil {
		t.Error("unavailable<=x accepted")
	}
}
