package verdict

import (
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// asTest makes a crafted result into a test as NewTest does (without
// the server's side): its JSON form, slo as its SLO verdict (nil: none)
// and its verdict judged.
func asTest(t testing.TB, r *scheduler.Result, slo *report.SLOResult) *report.Test {
	t.Helper()
	tt, err := report.NewTest(r, report.TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tt.SLO = slo
	j := Judge(tt)
	tt.Verdict, tt.VerdictReason = j.Verdict, j.Reason
	return tt
}
