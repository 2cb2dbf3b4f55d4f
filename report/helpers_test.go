package report

import (
	"testing"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// asTest makes a crafted result into a test as NewTest does: its JSON
// form, slo as its SLO verdict (nil: none) and its verdict judged, or,
// for renderer tests, the verdict and reason given.
func asTest(t testing.TB, r *scheduler.Result, slo *SLOResult, verdict ...string) *Test {
	t.Helper()
	tt, err := fromResult(r)
	if err != nil {
		t.Fatal(err)
	}
	tt.SLO = slo
	if len(verdict) == 2 {
		tt.Verdict, tt.VerdictReason = verdict[0], verdict[1]
		return &tt
	}
	j := Judge(&tt)
	tt.Verdict, tt.VerdictReason = j.Verdict, j.Reason
	return &tt
}

// withServer gives t the server's side of the test.
func withServer(t *Test, s *serverinfo.Stats) *Test {
	t.Server = s
	return t
}
