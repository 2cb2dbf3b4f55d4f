package experiment_test

import (
	"testing"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// fakeSide records the SLO it was judged against.
type fakeSide struct {
	name   string
	judged *verdict.SLO
}

func (f *fakeSide) Test(_ int, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	*f.judged = slo
	return &report.Test{Name: f.name}, verdict.Judgement{Outcome: verdict.Pass}, nil
}

// TestSideTests: the open side is judged against the SLO, the closed one
// against none; a nil side makes no test.
func TestSideTests(t *testing.T) {
	t.Parallel()
	slo, err := verdict.ParseSLO("p99<=5ms")
	if err != nil {
		t.Fatal(err)
	}
	var openSLO, closedSLO verdict.SLO
	open, closed := &fakeSide{"open", &openSLO}, &fakeSide{"closed", &closedSLO}
	o, j, c, err := experiment.SideTests(0, slo, open, closed)
	if err != nil || o.Name != "open" || c.Name != "closed" || j.Outcome != verdict.Pass {
		t.Fatalf("%v %v %v %v", o, j, c, err)
	}
	if openSLO.IsZero() || !closedSLO.IsZero() {
		t.Errorf("open judged against %v, closed against %v: want the SLO and none", openSLO, closedSLO)
	}
	if o, _, c, err := experiment.SideTests[int, *fakeSide](0, slo, open, nil); err != nil || o == nil || c != nil {
		t.Errorf("a nil closed side: %v %v %v", o, c, err)
	}
}
