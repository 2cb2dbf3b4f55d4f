package report

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/scheduler"
)

// TestDecideLineSaysWhenTheWholeDisagrees: a run that a look ended is
// judged whole, with the requests sent while the look judged; when that
// verdict is not the look's, the decide line says both, and the JSON
// keeps what the look said (look_outcome) through a reading.
func TestDecideLineSaysWhenTheWholeDisagrees(t *testing.T) {
	ext := &scheduler.Extension{Planned: 3e9, Budget: 10e9, Every: 3e9, PlannedLooks: 3, Looks: 1, Decided: true, LookOutcome: "pass"}
	d := decideJSON(ext, 3_021_917_000)
	if back := extensionOf(d); back.LookOutcome != "pass" {
		t.Fatalf("look outcome read back as %q", back.LookOutcome)
	}
	tt := &Test{Decide: d, Outcome: "pass", Intervals: []Interval{{StartS: 2, DurationS: 1}, {StartS: 3, DurationS: 0.021917, Counts: scheduler.Counts{Scheduled: 21}}}}
	if line := decideLine(tt); strings.Contains(line, "the look said") {
		t.Fatalf("agreeing outcomes: %q", line)
	}
	tt.Outcome = "inconclusive"
	want := "decided        at the first look, after the planned 3.0 s (budget 10 s); the look said pass, but judged whole, with the 21 requests intended in the 22 ms after it (while it judged) and the last replies, the test is inconclusive\n"
	if line := decideLine(tt); !strings.HasSuffix(line, want) {
		t.Fatalf("decide line\n%q\nwant it to end\n%q", line, want)
	}
}

// TestUnwrittenTestJudgesAlike: a test made for judging only (a look's,
// Unwritten) leaves its histograms unencoded and holds every figure the
// judgement reads as the written one does.
func TestUnwrittenTestJudgesAlike(t *testing.T) {
	r := resulttest.Sample()
	written, err := NewTest(r, TestOptions{ID: "get"})
	if err != nil {
		t.Fatal(err)
	}
	lean, err := NewTest(r, TestOptions{ID: "get", Unwritten: true})
	if err != nil {
		t.Fatal(err)
	}
	if written.Histograms.Response == "" || lean.Histograms.Response != "" || lean.Histograms.SendLag != nil {
		t.Fatalf("histograms: written %d bytes, unwritten %q", len(written.Histograms.Response), lean.Histograms.Response)
	}
	if *lean.ResponseMs != *written.ResponseMs || *lean.ServiceMs != *written.ServiceMs || *lean.SendLagMs != *written.SendLagMs {
		t.Fatalf("summaries differ: %+v against %+v", lean.Latencies, written.Latencies)
	}
	wf, lf := written.MustFacts(), lean.MustFacts()
	if wf.Response.TotalCount() != lf.Response.TotalCount() || wf.Response.ValueAtQuantile(99) != lf.Response.ValueAtQuantile(99) {
		t.Fatalf("facts differ: %d values, p99 %d against %d, %d", lf.Response.TotalCount(), lf.Response.ValueAtQuantile(99), wf.Response.TotalCount(), wf.Response.ValueAtQuantile(99))
	}
}

// TestDecideLineNamesARetake: a first look taken again for the replies
// open at it says how much later, keeps what it said at the planned time,
// and its retakes survive a reading of the JSON.
func TestDecideLineNamesARetake(t *testing.T) {
	why := "22 of the 2000 requests intended so far had no reply yet at the look; what was measured passes, but not whatever those take"
	ext := &scheduler.Extension{Planned: 2e9, Budget: 8e9, Every: 2e9, PlannedLooks: 4, Looks: 1, Decided: true, LookOutcome: "pass", Retakes: 1, WentOn: why}
	d := decideJSON(ext, 3_004_000_000)
	if back := extensionOf(d); back.Retakes != 1 {
		t.Fatalf("retakes read back as %d", back.Retakes)
	}
	want := "  decided        at the first look, after the planned 2.0 s and 1 s more for the replies still open at it (3.0 s measured; budget 8 s); at the planned end: " + why + "\n"
	if line := decideLine(&Test{Decide: d, Outcome: "pass"}); line != want {
		t.Fatalf("decide line\n%q\nwant\n%q", line, want)
	}
	ext.Looks, ext.WentOn = 3, "the client's part did not hold"
	d = decideJSON(ext, 7_010_000_000)
	want = "  decided        at look 3 of 4, after 7.0 s measured (budget 8 s; looks after the first at 98.75% confidence), taken again 1 s later for the replies still open at it; went on because the first look was inconclusive: the client's part did not hold\n"
	if line := decideLine(&Test{Decide: d, Outcome: "pass"}); line != want {
		t.Fatalf("decide line\n%q\nwant\n%q", line, want)
	}
}
