package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
)

func TestSweepUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no rates", []string{"sweep"}, "give the rates"},
		{"search without slo", []string{"sweep", "--search"}, "--search needs --slo"},
		{"search with rates", []string{"sweep", "--search", "--slo", "p99<1ms", "--rates", "1k"}, "drop --rates"},
		{"bad precision", []string{"sweep", "--search", "--slo", "p99<1ms", "--precision", "0%"}, "--precision"},
		{"precision above 100%", []string{"sweep", "--search", "--slo", "p99<1ms", "--precision", "1.5"}, "--precision"},
		{"max steps zero", []string{"sweep", "--search", "--slo", "p99<1ms", "--max-steps", "0"}, "--max-steps 0"},
		{"bad rate", []string{"sweep", "--rates", "1k,fast"}, "--rates"},
		{"from without step", []string{"sweep", "--from", "1k", "--to", "2k"}, "go together"},
		{"to below from", []string{"sweep", "--from", "2k", "--to", "1k", "--step", "100"}, "below --from"},
		{"search to below from", []string{"sweep", "--search", "--slo", "p99<1ms", "--from", "10k", "--to", "1k"}, "--to 1k is below --from 10k"},
		{"too many steps", []string{"sweep", "--from", "1", "--to", "1M", "--step", "1"}, "more than"},
		{"rates and from", []string{"sweep", "--rates", "1k", "--from", "1k"}, "drop --from"},
		{"list of connections in an open sweep", []string{"sweep", "--rates", "1k", "-c", "1,2"}, "needs --closed"},
		{"pipeline in an open sweep", []string{"sweep", "--rates", "1k", "-P", "4"}, "closed sweep"},
		{"rates in a closed sweep", []string{"sweep", "--closed", "--rates", "1k"}, "open sweep"},
		{"bad client list", []string{"sweep", "--closed", "-c", "10,x"}, "-c"},
		{"zero pipeline", []string{"sweep", "--closed", "-P", "0"}, "-P"},
		{"two tests", []string{"sweep", "--rates", "1k", "-t", "get,set"}, "one workload"},
		{"zero step duration", []string{"sweep", "--rates", "1k", "--step-duration", "0s"}, "--step-duration"},
		{"negative settle", []string{"sweep", "--rates", "1k", "--settle", "-1s"}, "--settle"},
		{"negative abort", []string{"sweep", "--rates", "1k", "--abort-after", "-1s"}, "--abort-after"},
		{"repeat zero", []string{"sweep", "--rates", "1k", "--repeat", "0"}, "--repeat 0"},
		{"run repeat zero", []string{"run", "--rate", "1k", "--repeat", "0"}, "--repeat 0"},
		{"bench repeat with -l", []string{"bench", "--repeat", "2", "-l"}, "-l"},
		{"closed sweep sharded", []string{"sweep", "--closed", "-c", "1,2", "--shard", "1/2", "--seed", "1"}, "a closed sweep has none"},
		{"closed sweep at an instant", []string{"sweep", "--closed", "-c", "1,2", "--start-in", "5s"}, "a closed sweep has none"},
		{"sharded search", []string{"sweep", "--search", "--slo", "p99<=1ms", "--shard", "1/2", "--seed", "1"}, "--shard cannot search"},
		{"compare sharded without a rate", []string{"compare", "--shard", "1/2", "--seed", "1"}, "--shard needs --rate"},
		{"compare shard without a client", []string{"compare", "--rate", "1k", "-c", "2", "--shard", "3/4", "--seed", "1"}, "leaves this shard no closed-loop client"},
	} {
		wantUsageError(t, tc.want, tc.args...)
	}
}

// sweepDoc is the part of a sweep's pacer.result/v1 these tests read.
type sweepDoc struct {
	Mode  string `json:"mode"`
	Tests []struct {
		Name      string            `json:"name"`
		Mode      string            `json:"mode"`
		DurationS float64           `json:"duration_s"`
		Counts    map[string]uint64 `json:"counts"`
		// Verdict is the trust rule's; SLO the structured clauses.
		Verdict string `json:"verdict"`
		SLO     *struct {
			Pass    bool `json:"pass"`
			Clauses []struct {
				Metric   string   `json:"metric"`
				Bound    float64  `json:"bound"`
				Observed *float64 `json:"observed"`
				Pass     bool     `json:"pass"`
				Basis    string   `json:"basis"`
			} `json:"clauses"`
		} `json:"slo"`
		Step *struct {
			Index      int     `json:"index"`
			TargetRate float64 `json:"target_rate"`
			Pass       *bool   `json:"pass"`
			Aborted    bool    `json:"aborted"`
			SettleS    float64 `json:"settle_s"`
			PlannedS   float64 `json:"planned_s"`
			// Insufficient: the SLO's percentile clauses it had too
			// few samples for (it is then unjudged).
			Insufficient []string `json:"insufficient_samples"`
			// Decision, Why, Intervals and Trend: how the step was
			// judged against the SLO.
			Decision  string `json:"decision"`
			Why       string `json:"why"`
			Intervals []struct {
				Clause   string   `json:"clause"`
				Metric   string   `json:"metric"`
				Bound    float64  `json:"bound"`
				Lo       *float64 `json:"lo"`
				Hi       *float64 `json:"hi"`
				Decision string   `json:"decision"`
			} `json:"percentile_intervals"`
			Trend *struct {
				Intervals int     `json:"intervals"`
				P50P      float64 `json:"p50_p"`
				InFlightP float64 `json:"in_flight_p"`
				Alpha     float64 `json:"alpha"`
				Rising    bool    `json:"rising"`
			} `json:"trend"`
		} `json:"step"`
		Repeats *struct {
			N      int                `json:"n"`
			Median map[string]float64 `json:"median"`
			Min    map[string]float64 `json:"min"`
			Max    map[string]float64 `json:"max"`
			Runs   []json.RawMessage  `json:"runs"`
		} `json:"repeats"`
		Percentiles []struct {
			P            string     `json:"p"`
			Insufficient bool       `json:"insufficient_samples"`
			CI95         []*float64 `json:"ci95"`
		} `json:"response_percentiles"`
		ReceiveLagMs *struct {
			Mean float64 `json:"mean"`
		} `json:"receive_lag_ms"`
	} `json:"tests"`
	Sweep *struct {
		Mode            string   `json:"mode"`
		Search          bool     `json:"search"`
		SustainableRate *float64 `json:"sustainable_rate"`
		// SustainableInterval is [lo, hi]: surely passes, surely fails.
		SustainableInterval []*float64        `json:"sustainable_interval"`
		Contradictions      []json.RawMessage `json:"contradictions"`
		Precision           float64           `json:"precision"`
		Steps               int               `json:"steps"`
		Converged           bool              `json:"converged"`
		Reason              string            `json:"reason"`
		Points              []struct {
			Clients        int     `json:"clients"`
			Pipeline       int     `json:"pipeline"`
			Throughput     float64 `json:"throughput"`
			MeanMs         float64 `json:"mean_ms"`
			P99Ms          float64 `json:"p99_ms"`
			LittleMs       float64 `json:"little_ms"`
			LittleRatio    float64 `json:"little_ratio"`
			LittleMismatch bool    `json:"little_mismatch"`
			Knee           bool    `json:"knee"`
		} `json:"points"`
		Knee *struct {
			Clients int `json:"clients"`
		} `json:"knee"`
	} `json:"sweep"`
}

func sweepJSON(t *testing.T, wantCodes []int, args ...string) (sweepDoc, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := pacer(t, append(args, "--json", out)...)
	ok := false
	for _, c := range wantCodes {
		ok = ok || c == code
	}
	if !ok {
		t.Fatalf("%v: exit %d, want one of %v\nstdout %s\nstderr %s", args, code, wantCodes, stdout, stderr)
	}
	return readJSON[sweepDoc](t, out), stdout, stderr
}

func balanced(c map[string]uint64) bool {
	return c["scheduled"] > 0 && c["scheduled"] == c["completed"]+c["errors"]+c["timeouts"]+c["unsent"]
}

// TestSweepPlainOpen: a plain sweep runs every rate on the same
// connections and writes a test per step and the sweep; without an SLO it
// exits 0 and names no sustainable rate.
func TestSweepPlainOpen(t *testing.T) {
	t.Parallel()
	// A loaded machine may put a step behind (exit 4): the document is what is checked.
	doc, stdout, _ := sweepJSON(t, []int{exitOK, exitUntrusted}, "sweep", "--embedded", "--rates", "500,1k", "--step-duration", "300ms",
		"--settle", "100ms", "-c", "2", "--ci")
	if doc.Mode != "open" || len(doc.Tests) != 2 || doc.Sweep == nil || doc.Sweep.Mode != "open" || doc.Sweep.Steps != 2 || !doc.Sweep.Converged {
		t.Fatalf("document: mode %s, %d tests, sweep %+v", doc.Mode, len(doc.Tests), doc.Sweep)
	}
	if doc.Sweep.SustainableRate != nil {
		t.Errorf("a sustainable rate without an SLO: %v", *doc.Sweep.SustainableRate)
	}
	for i, want := range []float64{500, 1000} {
		tt := doc.Tests[i]
		if tt.Mode != "open" || tt.Step == nil || tt.Step.Index != i || tt.Step.TargetRate != want || tt.Step.Pass != nil || tt.Step.SettleS != 0.1 {
			t.Errorf("test %d: mode %s step %+v", i, tt.Mode, tt.Step)
		}
		// 300 ms at the rate, the 100 ms settle left out.
		if !balanced(tt.Counts) || tt.Counts["scheduled"] != uint64(want*0.3) {
			t.Errorf("test %d: counts %v, want %v scheduled", i, tt.Counts, want*0.3)
		}
		if len(tt.Percentiles) != 6 || len(tt.Percentiles[0].CI95) != 2 || !tt.Percentiles[5].Insufficient {
			t.Errorf("test %d: percentiles %+v", i, tt.Percentiles)
		}
	}
	testrun.Contains(t, stdout, "step     target/s", "95% confidence", "insufficient samples")
}

// TestSweepSearchWithNoPassingRateExits3: an SLO nothing can meet ends the
// search with no sustainable rate, exit 3. The search turns down by ×¼,
// and a step whose rate gives the p50 too few samples in
// --step-duration is measured for longer; the search does not go below
// the rate that 6 × --step-duration (1.2 s) can judge, 19/s, and before it
// gives up it measures the first rate again (not back to back), and says
// why it stopped.
func TestSweepSearchWithNoPassingRateExits3(t *testing.T) {
	// A server 2 ms slow at every request against a 1 ms bound: its miss
	// is beyond any noise of the client host. No step is cut short (the
	// default, 100 ms of waiting, is within what a busy machine's own
	// stall can cause).
	doc, stdout, _ := sweepJSON(t, []int{exitSLO}, "sweep", "--embedded", "--delay", "2ms", "--search", "--slo", "p50<=1ms", "--from", "200",
		"--step-duration", "200ms", "--settle", "50ms", "-c", "2", "--abort-after", "5s")
	s := doc.Sweep
	if s == nil || !s.Search || s.SustainableRate != nil || s.Steps != 4 || s.Converged || s.Precision != 0.05 || len(doc.Tests) != 4 {
		t.Fatalf("sweep %+v, %d tests", s, len(doc.Tests))
	}
	if want := "no rate down to 19/s met the SLO; cannot judge p50 below 19/s with steps of 1.2s"; s.Reason != want {
		t.Errorf("reason %q, want %q", s.Reason, want)
	}
	// 200/s for 200 ms has 20 samples beyond the median; 50/s needs 0.44 s
	// (with a 10% margin), 19/s 1.16 s: to the next 100 ms.
	for i, want := range []struct{ rate, planned float64 }{{200, 0.2}, {50, 0.5}, {19, 1.2}, {200, 0.2}} {
		tt := doc.Tests[i]
		st := tt.Step
		if st == nil || st.TargetRate != want.rate || st.Pass == nil || *st.Pass || st.PlannedS != want.planned || len(st.Insufficient) != 0 {
			t.Errorf("step %d: %+v, want a failed step at %v/s planned for %v s", i, st, want.rate, want.planned)
		}
		// Failed beyond doubt: the p50's interval lies above 1 ms.
		if st != nil && (st.Decision != "fail" || len(st.Intervals) != 1 || st.Intervals[0].Decision != "fail" || st.Intervals[0].Lo == nil || *st.Intervals[0].Lo <= 1) {
			t.Errorf("step %d: decision %q, intervals %+v; want a sure failure", i, st.Decision, st.Intervals)
		}
		// The window runs to the last reply: 2 ms after the timeline at
		// least, more on a busy machine.
		if tt.DurationS < want.planned-0.01 || tt.DurationS > want.planned+1 {
			t.Errorf("step %d: measured for %v s, planned %v s", i, tt.DurationS, want.planned)
		}
		// Each step's SLO in numbers, judged by the trust rule.
		so := tt.SLO
		if so == nil || so.Pass || len(so.Clauses) != 1 || so.Clauses[0].Metric != "p50" || so.Clauses[0].Bound != 1 ||
			so.Clauses[0].Observed == nil || so.Clauses[0].Basis != "response" || tt.Verdict == "" {
			t.Errorf("step %d: slo %+v, verdict %q", i, so, tt.Verdict)
		}
	}
	if iv := s.SustainableInterval; len(iv) != 2 || iv[0] != nil || iv[1] == nil || *iv[1] != 19 {
		t.Errorf("sustainable interval %v, want [null, 19]", iv)
	}
	if !strings.Contains(stdout, "sustainable rate: none") || !strings.Contains(stdout, "cannot judge p50 below 19/s") ||
		!strings.Contains(stdout, "steps of 200ms (up to 1.2s where p50 needs the samples)") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestSweepUnjudgedStep: a step whose rate cannot give p99 enough samples
// even at the longest step (50/s for 1.2 s: 60 samples, 0.6 beyond the
// p99) is unjudged, neither pass nor fail; one that can is lengthened
// (1000/s for 1.1 s, 11 beyond). A sustainable rate above the unjudged
// step stands: exit 0.
func TestSweepUnjudgedStep(t *testing.T) {
	doc, stdout, _ := sweepJSON(t, []int{exitOK}, "sweep", "--embedded", "--rates", "50,1k", "--slo", "p99<=1s",
		"--step-duration", "200ms", "--settle", "50ms", "-c", "2")
	if len(doc.Tests) != 2 || doc.Sweep == nil || doc.Sweep.SustainableRate == nil || *doc.Sweep.SustainableRate != 1000 {
		t.Fatalf("sweep %+v, %d tests", doc.Sweep, len(doc.Tests))
	}
	low, high := doc.Tests[0], doc.Tests[1]
	// A step's window runs to its last reply: a few ms after its
	// timeline, more on a busy runner (24 ms once in CI).
	measuredFor := func(d, planned float64) bool { return d >= planned-0.01 && d <= planned+1 }
	if st := low.Step; st == nil || st.Pass != nil || !slices.Equal(st.Insufficient, []string{"p99"}) || st.PlannedS != 1.2 || !measuredFor(low.DurationS, 1.2) {
		t.Errorf("step 0: %+v, measured for %v s; want unjudged (p99), measured for 1.2 s", st, low.DurationS)
	}
	if st := high.Step; st == nil || st.Pass == nil || !*st.Pass || len(st.Insufficient) != 0 || st.PlannedS != 1.1 || !measuredFor(high.DurationS, 1.1) {
		t.Errorf("step 1: %+v, measured for %v s; want a pass measured for 1.1 s", st, high.DurationS)
	}
	if !strings.Contains(stdout, "unjudged [") || !strings.Contains(stdout, "(too few samples for p99)") || !strings.Contains(stdout, "secs") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestSweepSearchFindsARate: a generous SLO is met up to --to: exit 0 and
// a sustainable rate, with repeats kept per point.
func TestSweepSearchFindsARate(t *testing.T) {
	t.Parallel()
	doc, stdout, _ := sweepJSON(t, []int{exitOK}, "sweep", "--embedded", "--search", "--slo", "p50<=10s", "--from", "100",
		"--to", "400", "--step-duration", "200ms", "--settle", "50ms", "-c", "2", "--repeat", "2")
	s := doc.Sweep
	if s == nil || s.SustainableRate == nil || *s.SustainableRate != 400 || s.Steps != 2 || len(doc.Tests) != 2 {
		t.Fatalf("sweep %+v, %d tests", s, len(doc.Tests))
	}
	for i, tt := range doc.Tests {
		if tt.Repeats == nil || tt.Repeats.N != 2 || len(tt.Repeats.Runs) != 2 || tt.Repeats.Min["achieved_rate"] > tt.Repeats.Max["achieved_rate"] {
			t.Errorf("test %d: repeats %+v", i, tt.Repeats)
		}
		// Steps of 200 ms, 300 ms at 100/s for the p50's samples.
		if tt.Counts["scheduled"] != uint64(math.Round(2*tt.Step.TargetRate*tt.Step.PlannedS)) || tt.Step.PlannedS != map[float64]float64{100: 0.3, 400: 0.2}[tt.Step.TargetRate] {
			t.Errorf("test %d: the pooled counts %v are not the two runs'", i, tt.Counts)
		}
	}
	if !strings.Contains(stdout, "sustainable rate: 400/s") || !strings.Contains(stdout, "2 runs") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestSweepSearchSaysHowSure: each step of a search carries how it was
// judged (the 95% interval of the SLO's percentile, its decision, the
// trend test over its intervals), the sweep the sustainable rate as an
// interval; a search stopped by --max-steps before it bracketed the rate
// exits 4 and names the limit.
func TestSweepSearchSaysHowSure(t *testing.T) {
	args := []string{"sweep", "--embedded", "--search", "--slo", "p50<=1s", "--from", "200", "--step-duration", "300ms",
		"--settle", "50ms", "--interval", "50ms", "-c", "2"}
	doc, stdout, _ := sweepJSON(t, []int{exitOK}, append(args, "--to", "400")...)
	s := doc.Sweep
	if s == nil || len(doc.Tests) != 2 || s.SustainableRate == nil || *s.SustainableRate != 400 ||
		len(s.SustainableInterval) != 2 || s.SustainableInterval[0] == nil || *s.SustainableInterval[0] != 400 || s.SustainableInterval[1] != nil || len(s.Contradictions) != 0 {
		t.Fatalf("sweep %+v, %d tests", s, len(doc.Tests))
	}
	for i, tt := range doc.Tests {
		st := tt.Step
		if st == nil || st.Decision != "pass" || len(st.Intervals) != 1 {
			t.Fatalf("step %d: %+v", i, st)
		}
		iv := st.Intervals[0]
		if iv.Clause != "p50<=1s" || iv.Metric != "p50" || iv.Bound != 1000 || iv.Decision != "pass" || iv.Lo == nil || iv.Hi == nil || *iv.Lo > *iv.Hi || *iv.Hi > 1000 {
			t.Errorf("step %d: interval %+v", i, iv)
		}
		// 300 ms in 50 ms intervals: 6, the last the drain's tail.
		if tr := st.Trend; tr == nil || tr.Intervals < 4 || tr.Alpha != 0.01 || tr.Rising || tr.P50P <= 0 || tr.InFlightP <= 0 {
			t.Errorf("step %d: trend %+v", i, tr)
		}
	}
	if !strings.Contains(stdout, "sustainable rate: 400/s surely passes") || !strings.Contains(stdout, "pass [") {
		t.Errorf("stdout:\n%s", stdout)
	}
	doc, _, stderr := sweepJSON(t, []int{exitUntrusted}, append(args, "--max-steps", "1")...)
	if s := doc.Sweep; s == nil || s.Converged || !strings.Contains(s.Reason, "stopped after 1 steps") || !strings.Contains(stderr, "stopped at its step limit, --max-steps 1") {
		t.Errorf("--max-steps 1: sweep %+v; stderr %s", s, stderr)
	}
}

// TestSweepClosed: every -c × -P point in the order of requests in
// flight, with Little's law filled in.
func TestSweepClosed(t *testing.T) {
	t.Parallel()
	doc, stdout, _ := sweepJSON(t, []int{exitOK}, "sweep", "--embedded", "--closed", "-c", "4,1", "-P", "1,4", "--step-duration", "200ms")
	s := doc.Sweep
	if doc.Mode != "closed" || s == nil || s.Mode != "closed" || len(s.Points) != 4 || len(doc.Tests) != 4 || !s.Converged {
		t.Fatalf("mode %s, sweep %+v", doc.Mode, s)
	}
	want := [][2]int{{1, 1}, {1, 4}, {4, 1}, {4, 4}}
	for i, p := range s.Points {
		if p.Clients != want[i][0] || p.Pipeline != want[i][1] || p.Throughput <= 0 || p.MeanMs <= 0 || p.LittleMs <= 0 {
			t.Errorf("point %d: %+v, want -c %d -P %d measured", i, p, want[i][0], want[i][1])
		}
		// A request is in flight for Little's law until pacer reads its
		// reply: the mean latency plus the mean receive lag (one run a
		// point, so the point's median is that run's).
		rx := 0.0
		if l := doc.Tests[i].ReceiveLagMs; l != nil {
			rx = l.Mean
		}
		if r := p.LittleMs / (p.MeanMs + rx); r/p.LittleRatio < 0.99 || r/p.LittleRatio > 1.01 {
			t.Errorf("point %d: ratio %v for %v / (%v + %v)", i, p.LittleRatio, p.LittleMs, p.MeanMs, rx)
		}
		if !balanced(doc.Tests[i].Counts) || doc.Tests[i].Mode != "closed" {
			t.Errorf("test %d: %s, counts %v", i, doc.Tests[i].Mode, doc.Tests[i].Counts)
		}
	}
	if !strings.Contains(stdout, "knee:") || !strings.Contains(stdout, "little ms") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestRunAndBenchRepeat: --repeat keeps every run and summarises them.
func TestRunAndBenchRepeat(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--embedded", "--rate", "1k", "--duration", "200ms", "-c", "2", "-t", "get", "--repeat", "3", "--ci"},
		{"bench", "--embedded", "-n", "2000", "-c", "2", "-t", "get", "--repeat", "3", "--ci"},
	} {
		doc, stdout, stderr := sweepJSON(t, []int{exitOK, exitUntrusted}, args...)
		if len(doc.Tests) != 1 {
			t.Fatalf("%s: %d tests", args[0], len(doc.Tests))
		}
		tt := doc.Tests[0]
		if tt.Repeats == nil || tt.Repeats.N != 3 || len(tt.Repeats.Runs) != 3 {
			t.Fatalf("%s: repeats %+v", args[0], tt.Repeats)
		}
		for _, f := range []string{"achieved_rate", "p50", "p99"} {
			if tt.Repeats.Min[f] > tt.Repeats.Median[f] || tt.Repeats.Median[f] > tt.Repeats.Max[f] {
				t.Errorf("%s: %s median %v outside [%v, %v]", args[0], f, tt.Repeats.Median[f], tt.Repeats.Min[f], tt.Repeats.Max[f])
			}
		}
		if n := tt.Counts["scheduled"]; n != 3*map[string]uint64{"run": 200, "bench": 2000}[args[0]] {
			t.Errorf("%s: pooled scheduled %d", args[0], n)
		}
		if len(tt.Percentiles) == 0 || len(tt.Percentiles[0].CI95) != 2 {
			t.Errorf("%s: percentiles %+v", args[0], tt.Percentiles)
		}
		if text := stdout + stderr; !strings.Contains(text, "repeats: 3 runs") || !strings.Contains(text, "95% confidence") {
			t.Errorf("%s: output lacks the repeats and CI:\n%s", args[0], text)
		}
	}
}

// TestSweepShardStepsStartAtPlannedInstants: a sharded sweep's steps are
// the shard's part of each step's timeline, each from its planned
// instant: the previous step's start + its settle and duration + --drain +
// scheduler.StartSlack, which every shard computes alike.
func TestSweepShardStepsStartAtPlannedInstants(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, _, stderr := pacer(t, "sweep", "--embedded", "--rates", "500,1k", "--step-duration", "300ms", "--settle", "100ms",
		"--drain", "200ms", "-c", "2", "--seed", "3", "--shard", "2/2", "--start-in", "300ms", "--lag-limit", "1s", "-q", "--json", out)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	d := readResult(t, out)
	if len(d.Tests) != 2 || d.Shard == nil || d.Shard.K != 2 || d.Shard.N != 2 || d.Tests[0].StartedAt != d.StartAt {
		t.Fatalf("%d tests, shard %+v, start_at %q", len(d.Tests), d.Shard, d.StartAt)
	}
	a, err1 := time.Parse(time.RFC3339Nano, d.Tests[0].StartedAt)
	b, err2 := time.Parse(time.RFC3339Nano, d.Tests[1].StartedAt)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if gap := b.Sub(a); gap != 400*time.Millisecond+200*time.Millisecond+scheduler.StartSlack {
		t.Fatalf("the second step started %v after the first, want 1.6s", gap)
	}
	for i, want := range []float64{250, 500} {
		tr := d.Tests[i]
		// Half of the measured 300 ms at the step's rate.
		if *tr.TargetRate != want || tr.Counts.Scheduled != uint64(want*0.3) || !tr.Counts.Balanced() {
			t.Errorf("step %d: target %v, counts %+v; want half the timeline", i, *tr.TargetRate, tr.Counts)
		}
	}
}

// TestCompareShard: a sharded compare sends its part of each open
// timeline and runs its share of the closed loop's clients, each run from
// its planned instant.
func TestCompareShard(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "compare.json")
	code, _, stderr := pacer(t, "compare", "--embedded", "--rate", "1k", "--duration", "300ms", "--drain", "200ms",
		"-c", "5", "--seed", "3", "--shard", "2/2", "--start-in", "300ms", "-q", "--json", out)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	d := readResult(t, out)
	if len(d.Tests) != 2 || d.Shard == nil || d.Shard.K != 2 {
		t.Fatalf("%d tests, shard %+v", len(d.Tests), d.Shard)
	}
	closed, open := d.Tests[0], d.Tests[1]
	if closed.Mode != "closed" || closed.Connections != 2 || open.Mode != "open" || *open.TargetRate != 500 || open.Counts.Scheduled != 150 {
		t.Fatalf("closed: %s with %d connections; open: %s at %v, counts %+v", closed.Mode, closed.Connections, open.Mode, *open.TargetRate, open.Counts)
	}
	a, _ := time.Parse(time.RFC3339Nano, closed.StartedAt)
	b, _ := time.Parse(time.RFC3339Nano, open.StartedAt)
	if closed.StartedAt != d.StartAt || b.Sub(a) != 300*time.Millisecond+scheduler.DefaultDrain+scheduler.StartSlack {
		t.Fatalf("closed started %s (start_at %s), open %v later", closed.StartedAt, d.StartAt, b.Sub(a))
	}
}
