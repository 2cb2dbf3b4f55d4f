package report

import (
	"encoding/json"
	"testing"

	"github.com/pacer-load/pacer/scheduler"
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

// jsonObject is v marshalled and read back as a JSON object.
func jsonObject(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
