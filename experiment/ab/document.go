package ab

import (
	"strconv"
	"time"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Session names one comparison in both sides' documents, so that a
// reader can tell two sides of one ab from two of different ones: the
// seed and the start, in base 36.
func Session(seed uint64, start time.Time) string {
	return strconv.FormatUint(seed, 36) + "-" + strconv.FormatInt(start.UnixNano(), 36)
}

// Lost is a test whose target was lost (its judgement verdict.Error) on
// one side.
type Lost struct {
	Side         int
	Test, Reason string
}

// Document sets side s's tests in its document (Tests, with the
// percentiles) and returns the first of them whose target was lost (nil:
// none).
func (r *Result) Document(s int, tests []experiment.Test, doc *report.Document) (*Lost, error) {
	ts, js, err := r.Tests(s, tests, report.TestOptions{Percentiles: true})
	if err != nil {
		return nil, err
	}
	doc.Tests = ts
	for i, j := range js {
		if j.Outcome == verdict.Error {
			return &Lost{Side: s, Test: ts[i].Name, Reason: j.Reason}, nil
		}
	}
	return nil, nil
}
