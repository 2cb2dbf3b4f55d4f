package verdict

import (
	"math"
	"time"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// NewTest makes a run's result into a judged report test
// (report.NewTest), its SLO checked and the trust rule's judgement
// recorded (Record), and returns the judgement. It, NewMessagesTest and
// Merged are the places a verdict is written; nothing writes one back
// into a scheduler result.
func NewTest(r *scheduler.Result, o report.TestOptions, slo SLO) (*report.Test, Judgement, error) {
	t, err := report.NewTest(r, o)
	if err != nil {
		return nil, Judgement{}, err
	}
	j, err := Record(t, slo)
	if err != nil {
		return nil, Judgement{}, err
	}
	return t, j, nil
}

// NewMessagesTest makes a pubsub or stream run into a judged report test
// (report.NewMessagesTest), as NewTest does a run's: its SLO (with the
// loss and lag clauses) and the trust rule.
func NewMessagesTest(in report.MessagesRun, o report.TestOptions, slo SLO) (*report.Test, Judgement, error) {
	t, err := report.NewMessagesTest(in, o)
	if err != nil {
		return nil, Judgement{}, err
	}
	j, err := Record(t, slo)
	if err != nil {
		return nil, Judgement{}, err
	}
	return t, j, nil
}

// Record checks slo on a test just made from a run (the zero SLO checks
// nothing) and judges it (Judge), recording the judgement as the test's
// verdict, reason and outcome and each failing clause's owner.
func Record(t *report.Test, slo SLO) (Judgement, error) {
	var err error
	if t.SLO, err = slo.Check(t); err != nil {
		return Judgement{}, err
	}
	j := Judge(t)
	t.Verdict, t.VerdictReason, t.Outcome = j.Verdict, j.Reason, j.Outcome.String()
	if t.SLO != nil {
		for i := range t.SLO.Clauses {
			if i < len(j.Owners) {
				t.SLO.Clauses[i].Owner = j.Owners[i]
			}
		}
	}
	return j, nil
}

// Repeats summarises the runs of one test (report.NewRepeats): the
// median, min and max of their figures, and each run as a test of its
// own, with its own SLO verdict and verdict (the test's own are those of
// the runs pooled).
func Repeats(runs []*scheduler.Result, o report.TestOptions, slo SLO) (*report.Repeats, error) {
	figs := make([]map[string]float64, len(runs))
	tests := make([]report.Test, len(runs))
	for i, r := range runs {
		t, _, err := NewTest(r, o, slo)
		if err != nil {
			return nil, err
		}
		figs[i], tests[i] = report.Figures(t), *t
	}
	return report.NewRepeats(figs, tests), nil
}

// Merged judges the tests of a merged document (report.Merge) from their
// sums by the trust rule; a test a shard's lost target already judged
// keeps its verdict and gets its outcome. The shards' SLO verdicts are
// not carried over, so the merged tests are judged without one.
func Merged(d *report.Document) {
	for i := range d.Tests {
		t := &d.Tests[i]
		if t.Verdict != "" {
			t.Outcome = Of(t).String()
			continue
		}
		j := Judge(t)
		t.Verdict, t.VerdictReason, t.Outcome = j.Verdict, j.Reason, j.Outcome.String()
	}
}

// seconds turns seconds as the JSON keeps them into a duration, rounded
// to the nanosecond (the JSON's durations are exact to it).
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
