package report_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

func TestNoAuthRunIsNotOK(t *testing.T) {
	t.Parallel()
	r := noAuth()
	slo, err := verdict.ParseSLO("p99<2ms")
	if err != nil {
		t.Fatal(err)
	}
	res, err := slo.Check(report.AsTest(t, r, nil))
	if err != nil {
		t.Fatal(err)
	}
	// A latency bound over no samples is not met.
	if res.Pass || !strings.Contains(res.Line(), "no samples") {
		t.Errorf("slo p99<2ms over no samples: %s", res.Line())
	}

	q := render(t, func(b *bytes.Buffer) error {
		return text.Quiet(b, report.AsTest(t, r, res, noAuthVerdict...), report.TextOptions{})
	})
	testrun.Contains(t, q, "p50=- msec p99=- msec", "target_lost: nothing completed", ", errors 100.00%", "slo violated")
	if zeroLatency.MatchString(q) || strings.Contains(q, ", pass") {
		t.Errorf("-q line shows a latency or ok for a run that measured nothing:\n%s", q)
	}

	txt := render(t, func(b *bytes.Buffer) error {
		return text.Text(b, report.AsTest(t, r, res, noAuthVerdict...), report.TextOptions{})
	})
	testrun.Contains(t, txt,
		"error share    100.00% of scheduled",
		"first error    NOAUTH Authentication required.\n",
		"verdict: error (target_lost: nothing completed",
		"slo: VIOLATED: p99: no samples",
	)
	if strings.Count(txt, "NOAUTH Authentication required.") != 1 {
		t.Errorf("the first error's text should appear once:\n%s", txt)
	}
	if zeroLatency.MatchString(txt) {
		t.Errorf("summary shows a latency of 0.000 where there was none:\n%s", txt)
	}

	bc := render(t, func(b *bytes.Buffer) error {
		return text.BenchCommands(b, report.AsTest(t, r, nil, noAuthVerdict...), true, report.TextOptions{})
	})
	if zeroLatency.MatchString(bc) || !strings.Contains(bc, "p50=- msec") {
		t.Errorf("per-command line shows a latency where there was none: %s", bc)
	}

	tt, err := report.FromResult(r)
	if err != nil {
		t.Fatal(err)
	}
	tt.SLO = res
	doc := report.JSONObject(t, tt)
	for _, k := range []string{"response_ms", "service_ms"} {
		if doc[k] != nil {
			t.Errorf("%s = %v, want null for an empty histogram", k, doc[k])
		}
		if cmd := doc["commands"].(map[string]any)["GET"].(map[string]any); cmd[k] != nil {
			t.Errorf("commands.GET.%s = %v, want null", k, cmd[k])
		}
	}
	if doc["send_lag_ms"] == nil {
		t.Error("send_lag_ms is null, yet every request was sent")
	}
}

func TestQuietShowsErrorShare(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		errors, timeouts, scheduled uint64
		want                        string
	}{
		{50, 0, 1000, ", errors 5.00%"},
		{30, 20, 1000, ", errors 5.00%"},    // timeouts count, as in the SLO
		{1, 0, 1000000, ", errors 0.0001%"}, // never rounded to 0.00%
		{0, 0, 1000, ""},
	} {
		r := resulttest.Sample()
		r.Counts = scheduler.Counts{Scheduled: c.scheduled, Sent: c.scheduled, Errors: c.errors, Timeouts: c.timeouts,
			Completed: c.scheduled - c.errors - c.timeouts}
		q := render(t, func(b *bytes.Buffer) error { return text.Quiet(b, report.AsTest(t, r, nil), report.TextOptions{}) })
		if c.want == "" && strings.Contains(q, "errors") || !strings.Contains(q, c.want) {
			t.Errorf("%d errors + %d timeouts of %d: -q line %q, want %q", c.errors, c.timeouts, c.scheduled, q, c.want)
		}
	}
}

func TestSLOWarnsOfErrorsItDoesNotJudge(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample() // 2 errors + 2 timeouts of 10003
	slo, _ := verdict.ParseSLO("p99<20ms")
	res := report.MustCheck(t, slo, r)
	if !res.Pass {
		t.Fatalf("%s", res.Line())
	}
	txt := render(t, func(b *bytes.Buffer) error { return text.Text(b, report.AsTest(t, r, res), report.TextOptions{}) })
	if !strings.Contains(txt, "slo: pass (p99 9.904 ms < 20.000 ms)\n  slo warning: 4 of 10003 requests (0.040%) ended in errors or timeouts, and the SLO has no errors clause\n") {
		t.Errorf("no warning after the slo line:\n%s", txt)
	}
	if q := render(t, func(b *bytes.Buffer) error { return text.Quiet(b, report.AsTest(t, r, res), report.TextOptions{}) }); !strings.Contains(q, "slo pass with warnings") {
		t.Errorf("-q: %s", q)
	}
	b, _ := json.Marshal(res)
	if !bytes.Contains(b, []byte(`"warnings":["4 of 10003 requests`)) {
		t.Errorf("JSON slo: %s", b)
	}
	// An errors clause judges them: no warning. No errors: no warning.
	for _, spec := range []string{"p99<20ms,errors<1%"} {
		slo, _ := verdict.ParseSLO(spec)
		if w := sloWarnings(t, report.MustCheck(t, slo, r)); w != "[]" {
			t.Errorf("%s: warnings %s", spec, w)
		}
	}
	r.Counts.Errors, r.Counts.Timeouts, r.Counts.Completed = 0, 0, 10002
	if w := sloWarnings(t, report.MustCheck(t, slo, r)); w != "[]" {
		t.Errorf("no errors, yet warnings %s", w)
	}
}

func TestServerTextEscaped(t *testing.T) {
	t.Parallel()
	const evil = "\x1b]0;owned\x07\x1b[2J\r"
	r := resulttest.Sample()
	r.Name = "GET" + evil
	r.ErrorCodes = map[string]uint64{"ERR" + evil: 2}
	r.FirstError = "ERR " + evil + " rest of the text"
	lost := []string{report.VerdictTargetLost, "every connection lost: read: " + evil}
	r.Commands = []scheduler.CommandResult{{Name: "SET" + evil, Counts: r.Counts, Response: r.Response, Service: r.Service, Lag: r.Lag}}
	bench := resulttest.BenchSample()
	bench.Commands = r.Commands
	outs := map[string]string{
		"Text": render(t, func(b *bytes.Buffer) error {
			return text.Text(b, report.AsTest(t, r, nil, lost...), report.TextOptions{})
		}),
		"Quiet": render(t, func(b *bytes.Buffer) error {
			return text.Quiet(b, report.AsTest(t, r, nil, lost...), report.TextOptions{})
		}),
		"BenchCommands": render(t, func(b *bytes.Buffer) error {
			return text.BenchCommands(b, report.AsTest(t, bench, nil), false, report.TextOptions{})
		}),
		"BenchFull": render(t, func(b *bytes.Buffer) error {
			return peers.BenchFull(b, "SET"+evil, report.AsTest(t, bench, nil), peers.BenchInfo{}, 0)
		}),
		"BenchQuiet": render(t, func(b *bytes.Buffer) error {
			return peers.BenchQuiet(b, "SET"+evil, report.AsTest(t, bench, nil), 0, report.TextOptions{})
		}),
		"BenchCSV": render(t, func(b *bytes.Buffer) error {
			return peers.BenchCSV(b, "SET"+evil, report.AsTest(t, bench, nil), report.TextOptions{})
		}),
	}
	for name, out := range outs {
		// redis-benchmark's own layout uses \r to blank its progress line;
		// BenchFull and BenchQuiet start with that.
		out = strings.TrimPrefix(out, " \r")
		for i := 0; i < len(out); i++ {
			if c := out[i]; (c < 0x20 && c != '\n') || c == 0x7f {
				t.Errorf("%s prints control byte %#x: %q", name, c, out)
				break
			}
		}
		if !strings.Contains(out, `\x1b]0;owned\x07\x1b[2J\x0d`) {
			t.Errorf("%s lacks the escaped text: %q", name, out)
		}
	}
	if !strings.Contains(outs["Text"], `rest of the text`) {
		t.Error("the first error's text was cut")
	}
}

func TestUnsolicitedReported(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	if txt := render(t, func(b *bytes.Buffer) error { return text.Text(b, report.AsTest(t, r, nil), report.TextOptions{}) }); strings.Contains(txt, "unsolicited") {
		t.Errorf("unsolicited line without unsolicited replies:\n%s", txt)
	}
	r.Unsolicited = 7
	if txt := render(t, func(b *bytes.Buffer) error { return text.Text(b, report.AsTest(t, r, nil), report.TextOptions{}) }); !strings.Contains(txt, "  unsolicited replies 7 (never matched to requests)\n") {
		t.Errorf("no unsolicited line:\n%s", txt)
	}
	tt, err := report.FromResult(r)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(tt); !bytes.Contains(b, []byte(`"unsolicited":7`)) {
		t.Errorf("JSON: %s", b)
	}
}

func TestOtherErrorsLast(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	r.ErrorCodes = map[string]uint64{"other": 500, "ERR": 3, "WRONGTYPE": 7}
	txt := render(t, func(b *bytes.Buffer) error { return text.Text(b, report.AsTest(t, r, nil), report.TextOptions{}) })
	if !strings.Contains(txt, "errors by code WRONGTYPE 7, ERR 3, other 500\n") {
		t.Errorf("errors by code:\n%s", txt)
	}
}

// noAuth is what a run against a server with requirepass and no -a gave:
// every request an error reply, no latency sample, nothing completed.
// noAuthVerdict is the verdict the renderer tests give noAuth's test.
var noAuthVerdict = []string{report.VerdictTargetLost, "nothing completed: 1000 of 1000 requests ended in errors"}

func noAuth() *scheduler.Result {
	empty := histo.NewRecorder().Snapshot()
	lag := histo.NewRecorder()
	for i := int64(1); i <= 1000; i++ {
		lag.Record(20000)
	}
	rate, _ := timeline.ParseRate("1000")
	r := &scheduler.Result{
		Name: "GET", Mode: "open", TargetRate: rate, Arrival: "uniform", Pacing: "precise", Connections: 50,
		Counts:   scheduler.Counts{Scheduled: 1000, Sent: 1000, Errors: 1000},
		Window:   time.Second,
		Response: empty, Service: empty, Lag: lag.Snapshot(),
		ErrorCodes: map[string]uint64{"NOAUTH": 1000},
		FirstError: "NOAUTH Authentication required.",
		LagLimit:   time.Millisecond,
		Commands: []scheduler.CommandResult{{Name: "GET", Counts: scheduler.Counts{Scheduled: 1000, Sent: 1000, Errors: 1000},
			Response: empty, Service: empty, Lag: lag.Snapshot(), ErrorCodes: map[string]uint64{"NOAUTH": 1000}}},
	}
	return r
}

// zeroLatency matches a latency printed as 0.000 (not a share such as
// 100.000%).
var zeroLatency = regexp.MustCompile(`[ =]0\.000( |\n|$)`)

func render(t *testing.T, f func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sloWarnings is the JSON of res's warnings (always a list).
func sloWarnings(t *testing.T, res *report.SLOResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return string(m["warnings"])
}
