package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
)

func TestTextWithPercentiles(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	get, set := histo.NewRecorder(), histo.NewRecorder()
	for i := int64(1); i <= 1000; i++ {
		get.Record(i * 1000)
		set.Record(i * 3000)
	}
	r.Commands = []scheduler.CommandResult{
		{Name: "get", Counts: scheduler.Counts{Scheduled: 1000, Completed: 1000}, Response: get.Snapshot()},
		{Name: "set", Counts: scheduler.Counts{Scheduled: 1000, Completed: 1000}, Response: set.Snapshot()},
	}
	ps := []float64{50, 99.9, 99.99}
	var def, b bytes.Buffer
	if err := text.Text(&def, report.AsTest(t, r, nil), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := text.Text(&b, report.AsTest(t, r, nil), report.TextOptions{Percentiles: ps}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	resp := report.PercentileMillis(r.Response, ps)
	s := histo.Summarize(r.Response)
	testrun.Contains(t, out,
		"  latency (ms)         min      mean       p50     p99.9    p99.99       max\n",
		fmt.Sprintf("  response       %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", s.Min, s.Mean, resp[0], resp[1], resp[2], s.Max),
		"  per command      share  scheduled  completed  errors  timeouts  unsent  resp p50     p99.9    p99.99       max\n",
		"  get             50.00%       1000       1000       0         0       0     0.500     0.999     1.000     1.000\n",
	)
	if !strings.Contains(def.String(), "p95       p99     p99.9    p99.99       max\n") ||
		!strings.Contains(def.String(), "resp p50       p99     p99.9       max\n") {
		t.Errorf("the default columns changed:\n%s", def.String())
	}

	b.Reset()
	if err := text.Quiet(&b, report.AsTest(t, r, nil), report.TextOptions{Percentiles: []float64{99, 99.9}}); err != nil {
		t.Fatal(err)
	}
	q := report.PercentileMillis(r.Response, []float64{99, 99.9})
	if want := fmt.Sprintf("response p99=%.3f msec p99.9=%.3f msec, pass", q[0], q[1]); !strings.Contains(b.String(), want) {
		t.Errorf("quiet line %q lacks %q", b.String(), want)
	}
}
