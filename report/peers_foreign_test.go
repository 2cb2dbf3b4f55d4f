package report_test

import (
	"os"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
)

// A redis-benchmark 7 --csv output, as it prints it.
const benchmarkCSV = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"PING_INLINE","48780.49","0.560","0.096","0.495","0.695","2.871","3.351"
"SET","52631.58","0.511","0.104","0.487","0.695","1.103","1.423"
"GET","48780.49","0.537","0.296","0.495","0.847","1.423","1.775"
"LPUSH (needed to benchmark LRANGE)","50000.00","0.553","0.144","0.495","1.031","1.359","1.671"
`

// TestReadRedisBenchmarkCSV: each line is a closed test named and
// identified as pacer's own (so it matches pacer's GET), with the figures
// the format has; those it lacks are said.
func TestReadRedisBenchmarkCSV(t *testing.T) {
	t.Parallel()
	in, err := peers.ReadInput("bench.csv", []byte(benchmarkCSV))
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != report.FormatRedisBenchmarkCSV || len(in.Doc.Tests) != 4 {
		t.Fatalf("format %q, %d tests", in.Format, len(in.Doc.Tests))
	}
	get := in.Doc.Tests[2]
	if get.ID != "get" || get.Name != "GET" || get.Mode != "closed" || get.AchievedRate != 48780.49 ||
		get.ResponseMs.P50 != 0.495 || get.ResponseMs.P95 != 0.847 || get.ResponseMs.P99 != 1.423 || get.ResponseMs.Max != 1.775 || get.ResponseMs.Mean != 0.537 {
		t.Fatalf("GET %+v %+v", get, get.ResponseMs)
	}
	if in.Doc.Tests[3].ID != "lpush_for_lrange" {
		t.Errorf("the LPUSH that fills the list: id %q", in.Doc.Tests[3].ID)
	}
	for _, m := range []string{"p90", "p99.9", "p99.99", "counts"} {
		if !get.Lacking(m) {
			t.Errorf("GET does not lack %s", m)
		}
	}
	if get.Lacking("p99") || get.Lacking("max") {
		t.Error("GET lacks what it has")
	}
	if lacks := strings.Join(in.Lacks, ", "); !strings.HasPrefix(lacks, "p90, p99.9, p99.99, counts, histograms") {
		t.Errorf("lacks %q", lacks)
	}
	// Before Redis 6.2: test and rps only, no header.
	old, err := peers.ReadInput("old.csv", []byte("\"PING_INLINE\",\"116279.07\"\n\"GET\",\"120481.93\"\n"))
	if err != nil || len(old.Doc.Tests) != 2 || old.Doc.Tests[1].AchievedRate != 120481.93 || old.Doc.Tests[1].ResponseMs != nil ||
		!old.Doc.Tests[1].Lacking("p50") {
		t.Fatalf("an old csv: %v %+v", err, old.Doc)
	}
	for name, bad := range map[string]string{
		"a short line":   benchmarkCSV + "\"GET\",\"1\"\n",
		"not a number":   strings.Replace(benchmarkCSV, "48780.49", "lots", 1),
		"a negative":     strings.Replace(benchmarkCSV, "0.495", "-1", 1),
		"not csv":        "\"unterminated\n",
		"an absurd rate": strings.Replace(benchmarkCSV, "48780.49", "1e300", 1),
		// p50 3 ms, p99 1 ms: percentiles that fall are not a distribution.
		"falling percentiles": strings.Replace(benchmarkCSV, `"0.495","0.695","2.871"`, `"3","3","1"`, 1),
		"a mean above max":    strings.Replace(benchmarkCSV, `"0.560","0.096"`, `"9.000","0.096"`, 1),
		"a min above p50":     strings.Replace(benchmarkCSV, `"0.560","0.096"`, `"0.560","0.900"`, 1),
	} {
		if _, err := peers.ReadInput("bad.csv", []byte(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line", name, err)
		}
	}
}

// memtierInput reads testdata/memtier.json as pacer report would, and
// returns the file's bytes too.
func memtierInput(t *testing.T) (report.Input, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/memtier.json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := peers.ReadInput("memtier.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return in, data
}

// TestReadMemtierJSON reads a memtier_benchmark --json-out-file written
// from memtier's JSON writer (run_stats.cpp, result_print_to_json): a
// test per command that ran, its percentiles from its histogram (so every
// one), its per-second series as intervals, and its configuration
// without the password.
func TestReadMemtierJSON(t *testing.T) {
	t.Parallel()
	in, data := memtierInput(t)
	var names []string
	for _, x := range in.Doc.Tests {
		names = append(names, x.ID+"/"+x.Name)
	}
	if in.Format != report.FormatMemtierJSON || strings.Join(names, " ") != "get/GET set/SET /Totals (memtier)" {
		t.Fatalf("format %q, tests %q", in.Format, names)
	}
	get := in.Doc.Tests[0]
	if get.AchievedRate != 10000 || get.Counts.Completed != 40000 || get.ResponseMs.P99 != 0.839 || get.Lacking("p99.99") || get.Lacking("counts") {
		t.Fatalf("GET %+v %+v", get, get.ResponseMs)
	}
	// Its histogram, re-recorded in ns, gives memtier's percentiles.
	h := reference.Histogram(t, get.Histograms.Response)
	if p99 := histo.Millis(h.ValueAtQuantile(99)); p99 < 0.838 || p99 > 0.841 || h.TotalCount() != 40000 {
		t.Errorf("p99 from the histogram %.4f ms (memtier printed 0.839), %d samples", p99, h.TotalCount())
	}
	// The figures memtier did not print come from the histogram: none
	// is left at zero, and they rise with the percentile.
	for _, x := range in.Doc.Tests[:2] {
		r := x.ResponseMs
		prev := 0.0
		for i, v := range []float64{r.Min, r.P50, r.P90, r.P95, r.P99, r.P999, r.P9999, r.Max} {
			if v <= 0 || v < prev {
				t.Fatalf("%s's summary, figure %d: %+v", x.Name, i, *r)
			}
			prev = v
		}
	}
	if len(get.Intervals) != 4 || get.Intervals[1].ResponseMs == nil || get.Intervals[1].ResponseMs.P999 == 0 || get.Intervals[1].Completed != 10000 {
		t.Fatalf("intervals %+v", get.Intervals)
	}
	for _, c := range in.Config() {
		if strings.Contains(c.Value, "hunter2") {
			t.Errorf("the configuration shows the password: %s=%s", c.Key, c.Value)
		}
	}
	// Printed percentiles that fall (p50 3 > p99 1) are refused, as a
	// figure that is not a number is; in a second of the series they are
	// left out.
	falling := strings.Replace(string(data), `"p50.000": 0.799`, `"p50.000": 3`, 1)
	falling = strings.Replace(falling, `"p99.000": 1.119`, `"p99.000": 1`, 1)
	if _, err := peers.ReadInput("falling.json", []byte(falling)); err == nil || !strings.Contains(err.Error(), "p99 1 is below p50 3") {
		t.Errorf("falling percentiles in a memtier file: %v", err)
	}
	second := strings.Replace(string(data), `"p99.00": 0.839`, `"p99.00": 0.001`, 1)
	if in, err := peers.ReadInput("second.json", []byte(second)); err != nil || in.Doc.Tests[0].Intervals[0].ResponseMs != nil {
		t.Errorf("a second whose p99 is below its p50: %v, kept", err)
	}
	// A geometry memtier never writes is refused before it is decoded.
	wide, err := hdrhistogram.New(1, 1<<62, 5).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), get0(t, data), string(wide), 1)
	if _, err := peers.ReadInput("wide.json", []byte(doc)); err == nil || !strings.Contains(err.Error(), "geometry") {
		t.Errorf("a wide histogram in a memtier file: %v", err)
	}
}

// get0 is the first compressed histogram of a memtier file.
func get0(t *testing.T, data []byte) string {
	t.Helper()
	const key = `"Compressed Histogram": "`
	s := string(data)
	i := strings.Index(s, key)
	if i < 0 {
		t.Fatal("no histogram in the fixture")
	}
	s = s[i+len(key):]
	return s[:strings.Index(s, `"`)]
}
