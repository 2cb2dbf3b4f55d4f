package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// readDiff reads a pacer.diff/v1 file with report's reader.
func readDiff(t *testing.T, path string) *diff.Document {
	t.Helper()
	d, err := diff.Read(readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// allSame fails t unless every figure of every test of d says same with
// an interval holding 0.
func allSame(t *testing.T, what string, d *diff.Document) {
	t.Helper()
	if len(d.Tests) == 0 {
		t.Errorf("%s: no test compared (%+v)", what, d.Unmatched)
	}
	for _, tt := range d.Tests {
		for _, f := range tt.Figures {
			iv := f.Interval
			if f.Word != "same" || len(iv) != 2 || iv[0] == nil || iv[1] == nil || *iv[0] > 0 || *iv[1] < 0 {
				t.Errorf("%s: %s %s: %s %v (%s)", what, tt.Name, f.Figure, f.Word, iv, f.Why)
			}
		}
	}
}

// pacer diff r.json r.json: a run with itself is the same everywhere,
// each interval holding 0, exit 0, for every kind of result pacer
// writes: a run, --repeat, merged shards, replay, bench and sweep; and
// two results of a kind compare (a sweep step by step).
func TestDiffEveryKindOfResult(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "runs pacer's commands against a redis-server for some seconds")
	srv := redistest.Start(t)
	hp := hostPort(t, srv.Addr)
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	run := func(args ...string) {
		t.Helper()
		args = append(append([]string{args[0]}, hp...), append([]string{"-q"}, args[1:]...)...)
		if code, _, stderr := pacer(t, args...); code != exitOK && code != exitUntrusted {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	trace := out("trace.jsonl")
	var tr strings.Builder
	for i := range 600 {
		fmt.Fprintf(&tr, "{\"t\": %.4f, \"argv\": [\"SET\", \"k%d\", \"v\"]}\n", float64(i)/400, i%50)
	}
	if err := os.WriteFile(trace, []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][2]string{}
	for _, k := range []string{"1", "2"} {
		run("run", "--rate", "1k", "--duration", "1500ms", "-c", "4", "-t", "get,set", "--json", out("run"+k+".json"))
		run("run", "--rate", "1k", "--duration", "600ms", "-c", "4", "-t", "get", "--repeat", "2", "--json", out("repeat"+k+".json"))
		for _, s := range []string{"1/2", "2/2"} {
			run("run", "--rate", "1k", "--duration", "600ms", "-c", "2", "-t", "get", "--seed", "7", "--shard", s, "--json", out("shard"+k+s[:1]+".json"))
		}
		if code, _, stderr := pacer(t, "merge", out("shard"+k+"1.json"), out("shard"+k+"2.json"), "-o", out("merge"+k+".json")); code != exitOK && code != exitUntrusted {
			t.Fatalf("merge: exit %d: %s", code, stderr)
		}
		run("replay", "--json", out("replay"+k+".json"), trace)
		run("bench", "-n", "3000", "-c", "4", "-t", "get", "--json", out("bench"+k+".json"))
		run("sweep", "--rates", "500,1k", "--step-duration", "600ms", "--settle", "100ms", "-c", "4", "--json", out("sweep"+k+".json"))
	}
	for _, k := range []string{"run", "repeat", "merge", "replay", "bench", "sweep"} {
		kinds[k] = [2]string{out(k + "1.json"), out(k + "2.json")}
	}
	for kind, files := range kinds {
		d := out(kind + ".diff.json")
		code, stdout, stderr := pacer(t, "diff", files[0], files[0], "--json", d, "--max-regression", "p99:10%,errors:0.1%")
		if code != exitOK {
			t.Errorf("%s with itself: exit %d: %s", kind, code, stderr)
			continue
		}
		testrun.Contains(t, stdout, "the same runs on both sides", "same")
		allSame(t, kind+" with itself", readDiff(t, d))
		code, _, stderr = pacer(t, "diff", files[0], files[1], "--json", d)
		if code != exitOK {
			t.Errorf("%s against another: exit %d: %s", kind, code, stderr)
			continue
		}
		got := readDiff(t, d)
		if len(got.Tests) == 0 {
			t.Errorf("%s against another: nothing compared: %+v", kind, got.Unmatched)
		}
		for _, tt := range got.Tests {
			want := "blocks"
			if kind == "repeat" {
				want = "runs"
			}
			if tt.Method != want {
				t.Errorf("%s against another: %s by %s, want %s", kind, tt.Name, tt.Method, want)
			}
		}
		if kind == "sweep" && (len(got.Tests) != 2 || *got.Tests[0].TargetRate != 500 || *got.Tests[1].TargetRate != 1000) {
			t.Errorf("sweep against sweep: not step by step: %+v", got.Tests)
		}
	}
	// Several files a side are repeats.
	code, stdout, stderr := pacer(t, "diff", kinds["run"][0], kinds["run"][1], "--", kinds["run"][1], kinds["run"][0])
	if code != exitOK || !strings.Contains(stdout, "2 runs against 2 runs") {
		t.Errorf("two files a side: exit %d: %s\n%s", code, stderr, stdout)
	}
}

// synthResult writes a result file of runs of one GET test at 2k/s whose
// latencies are log-normal around median µs (a run's level spread by 2%),
// with report's writer, so that pacer diff's words and exit codes can be
// held to a known change.
func synthResult(t *testing.T, path string, median float64, runs int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var tests []report.Test
	for range runs {
		level := math.Exp(0.02 * rng.NormFloat64())
		all := histo.New()
		rate := 2000.0
		tt := report.Test{ID: "get", Name: "GET", Mode: "open", TargetRate: &rate, Verdict: report.VerdictOK, DurationS: 5, IntervalS: 1}
		for i := range 5 {
			h := histo.New()
			for range 2000 {
				v := int64(1000 * median * level * math.Exp(0.4*rng.NormFloat64()))
				h.RecordValue(v)
				all.RecordValue(v)
			}
			c := scheduler.Counts{Scheduled: 2000, Sent: 2000, Completed: 2000}
			iv := report.Interval{StartS: float64(i), DurationS: 1, Counts: c}
			iv.Histograms.Response, _ = histo.Encode(h)
			tt.Intervals = append(tt.Intervals, iv)
			tt.Counts.Scheduled += 2000
			tt.Counts.Sent += 2000
			tt.Counts.Completed += 2000
		}
		tt.Histograms.Response, _ = histo.Encode(all)
		s := histo.Summarize(all)
		tt.ResponseMs, tt.AchievedRate = &s, 2000
		tests = append(tests, tt)
	}
	pooled := tests[0]
	if runs > 1 {
		pooled.Repeats = &report.Repeats{N: runs, Runs: tests}
	}
	d := &report.Document{Schema: report.Schema, Mode: "open", Tool: report.Tool{Name: "pacer", Version: "test"}, Tests: []report.Test{pooled}}
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The gate's exit codes on known changes: 3 when the candidate is surely
// worse beyond an allowance, 0 when surely within every one, 4 when it
// cannot tell, with one line on stderr naming why.
func TestDiffGateExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, slow, same := filepath.Join(dir, "base.json"), filepath.Join(dir, "slow.json"), filepath.Join(dir, "same.json")
	synthResult(t, base, 200, 3, 1)
	synthResult(t, slow, 260, 3, 2) // 30% slower
	synthResult(t, same, 200, 3, 3)
	for _, c := range []struct {
		cand, gate string
		want       int
		stderr     string
	}{
		{slow, "p99:10%", exitSLO, "p99 of GET: +"},
		{slow, "p50:50%,throughput:5%", exitOK, ""},
		{slow, "p50:30%", exitUntrusted, "straddles the 30% allowance"},
		{same, "p50:10%,throughput:5%,errors:0.1%", exitOK, ""},
	} {
		code, stdout, stderr := pacer(t, "diff", base, c.cand, "--max-regression", c.gate)
		lines := strings.Count(stderr, "\n")
		if code != c.want || !strings.Contains(stderr, c.stderr) || c.want != exitOK && lines != 1 {
			t.Errorf("%s against %s: exit %d, want %d; stderr %q\n%s", filepath.Base(c.cand), c.gate, code, c.want, stderr, stdout)
		}
		if !strings.Contains(stdout, "gate --max-regression "+c.gate+": ") {
			t.Errorf("%s: the table has no gate line:\n%s", c.gate, stdout)
		}
	}
	code, stdout, _ := pacer(t, "diff", base, slow)
	if code != exitOK || !regexpWord(stdout, "p50", "worse") || !regexpWord(stdout, "p99", "worse") {
		t.Errorf("30%% slower: exit %d\n%s", code, stdout)
	}
}

// regexpWord reports whether the table's row of figure ends in word.
func regexpWord(table, figure, word string) bool {
	for l := range strings.Lines(table) {
		if strings.HasPrefix(l, figure+" (") && strings.HasSuffix(strings.TrimSpace(l), word) {
			return true
		}
	}
	return false
}

// --json, --plot and --html; pacer report of the document prints the
// same table and draws it again.
func TestDiffOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	synthResult(t, a, 200, 1, 4)
	synthResult(t, b, 300, 1, 5)
	js, png, svg, page := filepath.Join(dir, "d.json"), filepath.Join(dir, "d.png"), filepath.Join(dir, "d.svg"), filepath.Join(dir, "d.html")
	code, stdout, stderr := pacer(t, "diff", a, b, "--json", js, "--plot", png, "--html", page, "--title", "Upgrade")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testrun.Contains(t, stdout, "baseline:  a.json", "candidate: b.json", "====== GET ======", "one run per side", "p99.9 (ms)",
		"throughput (req/s)", "errors (%)", "the spread between runs is not in them")
	checkPNG(t, png, "--plot")
	html := string(readFile(t, page))
	testrun.Contains(t, html, "<title>Upgrade</title>", "<svg", "change by percentile")
	d := readDiff(t, js)
	if d.Schema != diff.Schema || len(d.Tests) != 1 || len(d.Tests[0].Spectrum) == 0 || d.Baseline.Files[0] != "a.json" {
		t.Errorf("document: %+v", d)
	}
	f := d.Tests[0].Figures[0]
	if f.Figure != "p50" || f.Word != "worse" || f.Method != "blocks" || f.NBaseline != 1 || f.BaselineInterval == nil {
		raw, _ := json.Marshal(f)
		t.Errorf("p50: %s", raw)
	}
	code, again, stderr := pacer(t, "report", js, "--plot", svg, "--html", page)
	if code != exitOK || again != stdout {
		t.Errorf("report of the diff: exit %d (%s)\n%s\nwant\n%s", code, stderr, again, stdout)
	}
	if !strings.Contains(string(readFile(t, svg)), "<svg") {
		t.Errorf("report --plot of a diff: no svg")
	}
}

func TestDiffUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, other := filepath.Join(dir, "a.json"), filepath.Join(dir, "other.json")
	synthResult(t, a, 200, 1, 6)
	if err := os.WriteFile(other, []byte(strings.NewReplacer(`"id": "get"`, `"id": "set"`, `"name": "GET"`, `"name": "SET"`).Replace(string(readFile(t, a)))), 0o644); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "rb.csv")
	if err := os.WriteFile(csv, []byte("\"test\",\"rps\"\n\"GET\",\"1000.00\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"give a baseline's and a candidate's", []string{"diff", a}},
		{"give a baseline's and a candidate's", []string{"diff", a, a, a}},
		{"at least one result file on each side", []string{"diff", a, "--"}},
		{"nothing to compare: no test of the baseline matches one of the candidate (GET: only in the baseline; SET: only in the candidate)", []string{"diff", a, other}},
		{"redis-benchmark --csv holds no histograms", []string{"diff", a, csv}},
		{"unknown figure", []string{"diff", a, a, "--max-regression", "latency:5%"}},
		{"--equivalence \"0\"", []string{"diff", a, a, "--equivalence", "0"}},
		{"--equivalence-errors", []string{"diff", "--equivalence-errors", "x", a, a}},
		{"--percentiles", []string{"diff", a, a, "--percentiles", "0"}},
		{"only one of --json, --plot and --html can go to stdout", []string{"diff", a, a, "--json", "-", "--html", "-"}},
		{"--plot", []string{"diff", a, a, "--plot", filepath.Join(dir, "x.gif")}},
		{"no such file", []string{"diff", a, filepath.Join(dir, "missing.json")}},
	} {
		wantUsageError(t, c.want, c.args...)
	}
}
