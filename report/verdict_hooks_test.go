package report_test

import (
	"time"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// report's tests judge through package verdict, which imports report:
// this external test file, compiled into the same test binary, hands
// its rules to them.
func init() {
	words := func(j verdict.Judgement) report.Judged {
		return report.Judged{Outcome: j.Outcome.String(), Verdict: j.Verdict, Reason: j.Reason, Owners: j.Owners}
	}
	sloOf := func(s any) verdict.SLO {
		if s == nil {
			return verdict.SLO{}
		}
		return s.(verdict.SLO)
	}
	report.SetVerdictHooks(
		func(spec string, w time.Duration) (any, error) {
			s, err := verdict.ParseSLO(spec)
			s.Window = w
			return s, err
		},
		func(s any, t *report.Test) (*report.SLOResult, error) { return sloOf(s).Check(t) },
		func(t *report.Test) report.Judged { return words(verdict.Judge(t)) },
		func(t *report.Test, s any) (report.Judged, error) {
			j, err := verdict.Record(t, sloOf(s))
			return words(j), err
		})
}
