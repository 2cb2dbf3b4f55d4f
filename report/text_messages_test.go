package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/verdict"
)

// TestMessagesTest: a messages test's latencies are its deliveries', the
// publisher's own are kept apart, its intervals hold the deliveries, and
// it reads back and renders the same.
func TestMessagesTest(t *testing.T) {
	t.Parallel()
	tt, j, err := verdict.NewMessagesTest(report.StreamRun(t, 1000, 3, 4, 2, nil), report.TestOptions{}, report.MustSLO(t, "p99<=5ms,loss<=0", 0).(verdict.SLO))
	if err != nil {
		t.Fatal(err)
	}
	if j.Outcome != verdict.Pass || !tt.SLO.Pass || tt.SLO.Clauses[0].Basis != "delivery" {
		t.Fatalf("judged %+v, slo %+v", j, tt.SLO)
	}
	if tt.ResponseMs.P99 < 1.99 || tt.ResponseMs.P99 > 2.01 || tt.Messages.Publish.ResponseMs.P99 > 0.11 {
		t.Errorf("delivery p99 %v, publish p99 %v", tt.ResponseMs.P99, tt.Messages.Publish.ResponseMs.P99)
	}
	if tt.Messages.Delivered != 12000 || tt.Messages.Lost != 0 || len(tt.Intervals) != 4 || tt.Intervals[0].Messages.Delivered != 4000 || tt.Intervals[0].ResponseMs.Count != 4000 {
		t.Errorf("messages %+v, intervals %d, first %+v", tt.Messages, len(tt.Intervals), tt.Intervals[0].Messages)
	}
	doc := report.CraftDoc("pubsub", *tt)
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.ReadInput("x", b)
	if err != nil {
		t.Fatal(err)
	}
	var live, back bytes.Buffer
	if err := text.Text(&live, tt, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := text.Text(&back, &in.Doc.Tests[0], report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if live.String() != back.String() {
		t.Errorf("read back renders differently:\n%s\n---\n%s", live.String(), back.String())
	}
	testrun.Contains(t, live.String(), "deliveries     expected 12000 = delivered 12000 + lost 0", "delivery ", "publish ",
		"receivers      mean 4.00 per message", "per subscriber", "slo: pass")
	var q bytes.Buffer
	if err := text.Quiet(&q, tt, report.TextOptions{}); err != nil || !strings.Contains(q.String(), "delivery p50=2.001 msec") || !strings.Contains(q.String(), "lost 0 of 12000") {
		t.Errorf("quiet: %q %v", q.String(), err)
	}
}

// TestLagClause: a stream's lag that rises through the run fails a lag
// clause even under its bound, and says unsustainable; a flat one
// passes; the drain's interval is left out of the trend.
func TestLagClause(t *testing.T) {
	t.Parallel()
	rising := []int64{0, 200, 400, 600, 800, 1000}
	flat := []int64{3, 0, 5, 1, 2, 4}
	for _, c := range []struct {
		name   string
		lag    []int64
		slo    string
		pass   bool
		rising bool
	}{
		{"rising past the bound", rising, "lag<=500", false, true},
		{"rising under the bound", rising, "lag<=100000", false, true},
		{"flat", flat, "lag<=10", true, false},
		{"flat over the bound", flat, "lag<=4", false, false},
	} {
		tt, j, err := verdict.NewMessagesTest(report.StreamRun(t, 1000, 6, 2, 1, c.lag), report.TestOptions{}, report.MustSLO(t, c.slo, 0).(verdict.SLO))
		if err != nil {
			t.Fatal(err)
		}
		l := tt.Messages.Stream.Lag
		if tt.SLO.Pass != c.pass || l.Rising != c.rising || l.Sustainable == c.rising || l.Intervals != 6 {
			t.Errorf("%s: slo %+v lag %+v", c.name, tt.SLO, l)
		}
		if !c.pass && (j.Outcome != verdict.Fail || tt.SLO.Clauses[0].Owner != verdict.OwnerServer) {
			t.Errorf("%s: %+v", c.name, j)
		}
		if c.rising && !strings.Contains(tt.SLO.Violations[0], "unsustainable") {
			t.Errorf("%s: %q", c.name, tt.SLO.Violations[0])
		}
		var b bytes.Buffer
		if err := text.Text(&b, tt, report.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if c.rising != strings.Contains(b.String(), "RISING") {
			t.Errorf("%s: text:\n%s", c.name, b.String())
		}
	}
}
