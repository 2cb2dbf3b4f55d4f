package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// A document read back prints as the run printed it: the text of the
// result rebuilt from the JSON is the text of the original result.
func TestRenderRoundTrip(t *testing.T) {
	t.Parallel()
	orig := openResult("GET", 1)
	slo, err := verdict.ParseSLO("p99<1ms,errors<1%")
	if err != nil {
		t.Fatal(err)
	}
	sr := report.MustCheck(t, slo, orig)
	var want bytes.Buffer
	if err := text.Text(&want, report.AsTest(t, orig, sr), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	in := report.InputOf(t, "run.json", report.CraftDoc("open", *report.AsTest(t, orig, sr)))
	var got bytes.Buffer
	if err := text.Render(&got, in.Doc); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("re-rendered:\n%s\nprinted by the run:\n%s", got.String(), want.String())
	}
}

func TestRenderClosed(t *testing.T) {
	t.Parallel()
	test := report.Craft(t, report.Fixture{Name: "SET", Mode: "closed", Rate: 10000, Seconds: 1, Base: 0.5, Interval: 1, Seed: 3})
	test.Verdict, test.VerdictReason = report.VerdictTargetLost, "every connection was lost"
	var b bytes.Buffer
	if err := text.Render(&b, report.InputOf(t, "bench.json", report.CraftDoc("closed", test)).Doc); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	testrun.Contains(t, out,
		"SET: 10000.00 requests per second, p50=0.5", // redis-benchmark's -q line
		"latency (ms)", "p99.99",
		"SET: verdict target_lost (every connection was lost)",
	)
	if strings.Contains(out, "\r") {
		t.Errorf("a progress line's carriage return in %q", out)
	}
}

// openResult is a result as openloop.Run returns one, for a round
// trip through the JSON.
func openResult(name string, scale int64) *scheduler.Result {
	r := &scheduler.Result{
		Name: name, Mode: "open", TargetRate: timeline.RatePerSecond(2000), Arrival: "uniform", Pacing: "precise",
		Connections: 8, Window: 2 * time.Second,
		LagLimit: time.Millisecond, Response: histo.New(), Service: histo.New(), Lag: histo.New(),
		Counts:     scheduler.Counts{Scheduled: 4000, Sent: 3990, Completed: 3980, Errors: 5, Timeouts: 5, Unsent: 10},
		ErrorCodes: map[string]uint64{"ERR": 3, "WRONGTYPE": 2}, FirstError: "ERR nope",
		ConnsLost: 1, Reconnects: 1, Blocked: 20 * time.Millisecond,
	}
	for i := int64(1); i <= 3990; i++ {
		_ = r.Response.RecordValue(scale * (50_000 + i*37))
		_ = r.Service.RecordValue(scale * (30_000 + i*11))
		_ = r.Lag.RecordValue(1_000 + i)
	}
	return r
}
