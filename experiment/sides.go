package experiment

import (
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Side is one side of a run that drives the same load two ways (an open
// and a closed publisher's): its result made a test, judged against an
// SLO.
type Side[C any] interface {
	comparable
	Test(cfg C, slo verdict.SLO) (*report.Test, verdict.Judgement, error)
}

// SideTests makes a run's sides tests: the open one judged against slo,
// the closed one shown beside it and not judged, since its numbers are
// the ones that hide the server's stalls (a nil side: no test).
func SideTests[C any, S Side[C]](cfg C, slo verdict.SLO, open, closed S) (o *report.Test, j verdict.Judgement, c *report.Test, err error) {
	var none S
	if open != none {
		if o, j, err = open.Test(cfg, slo); err != nil {
			return nil, j, nil, err
		}
	}
	if closed != none {
		if c, _, err = closed.Test(cfg, verdict.SLO{}); err != nil {
			return nil, j, nil, err
		}
	}
	return o, j, c, nil
}
