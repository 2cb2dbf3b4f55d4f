package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pacer-load/pacer/scheduler"
)

// asTest makes a crafted result into a test as NewTest does: its JSON
// form, slo as its SLO verdict (nil: none) and its verdict judged, or,
// for renderer tests, the verdict and reason given.
func asTest(t testing.TB, r *scheduler.Result, slo *SLOResult, verdict ...string) *Test {
	t.Helper()
	tt, err := fromResult(r, true)
	if err != nil {
		t.Fatal(err)
	}
	tt.SLO = slo
	if len(verdict) == 2 {
		tt.Verdict, tt.VerdictReason = verdict[0], verdict[1]
		return &tt
	}
	j := judgeHook(&tt)
	tt.Verdict, tt.VerdictReason = j.Verdict, j.Reason
	return &tt
}

// The rules that judge a test are package verdict's, which imports
// report: report's own tests reach them through these hooks, which
// verdict_hooks_test.go (package report_test, compiled into the same
// test binary) sets.
var (
	// parseSLOHook is verdict.ParseSLO with the SLO's window set.
	parseSLOHook func(spec string, window time.Duration) (sloSpec, error)
	// checkHook is verdict.SLO.Check.
	checkHook func(s sloSpec, t *Test) (*SLOResult, error)
	// judgeHook is verdict.Judge.
	judgeHook func(t *Test) judged
	// recordHook is verdict.Record (s nil: no SLO).
	recordHook func(t *Test, s sloSpec) (judged, error)
)

// sloSpec is a verdict.SLO, which report's tests cannot name.
type sloSpec any

// judged is a verdict.Judgement in words: its outcome ("pass", "fail",
// "inconclusive", "error"), verdict, reason and clauses' owners.
type judged struct {
	Outcome, Verdict, Reason string
	Owners                   []string
}

// parseSLO reads an SLO as --slo does.
func parseSLO(spec string) (sloSpec, error) { return parseSLOHook(spec, 0) }

func mustSLO(t *testing.T, spec string, window time.Duration) sloSpec {
	t.Helper()
	s, err := parseSLOHook(spec, window)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustCheck checks s on r made a test.
func mustCheck(t *testing.T, s sloSpec, r *scheduler.Result) *SLOResult {
	t.Helper()
	res, err := checkHook(s, asTest(t, r, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// judgedMessages is verdict.NewMessagesTest.
func judgedMessages(in MessagesRun, o TestOptions, s sloSpec) (*Test, judged, error) {
	t, err := NewMessagesTest(in, o)
	if err != nil {
		return nil, judged{}, err
	}
	j, err := recordHook(t, s)
	return t, j, err
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
