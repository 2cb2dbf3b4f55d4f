package peers

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
)

// TestBenchFormatsGolden pins redis-benchmark's formats as rendered here
// (testdata/bench.golden, written by -update, not by redis-benchmark); the
// comparison with the real redis-benchmark is
// cmd/pacer's TestBenchParityWithRedisBenchmark.
func TestBenchFormatsGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	res := resulttest.BenchSample()
	if err := BenchCSVHeader(&b, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := BenchCSV(&b, "SET", reporttest.AsTest(t, res), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := BenchQuiet(&b, "SET", reporttest.AsTest(t, res), 0, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := BenchQuiet(&b, "SET", reporttest.AsTest(t, res), 12, report.TextOptions{}); err != nil { // after a 12-byte progress line
		t.Fatal(err)
	}
	n, err := BenchProgress(&b, "SET", 80000, 79000.5, 0.2999, 0.31, 0)
	if err != nil || n != len("SET: rps=80000.0 (overall: 79000.5) avg_msec=0.300 (overall: 0.310)\r") {
		t.Fatalf("progress line length %d, %v", n, err)
	}
	b.WriteString("\n")
	info := BenchInfo{Clients: 50, DataSize: 3, KeepAlive: 1, HaveConfig: true, Save: "3600 1 300 100 60 10000", AppendOnly: "no"}
	if err := BenchFull(&b, "SET", reporttest.AsTest(t, res), info, 0); err != nil {
		t.Fatal(err)
	}
	info.Threads, info.HaveConfig = 4, false
	if err := BenchFull(&b, "GET", reporttest.AsTest(t, res), info, 0); err != nil {
		t.Fatal(err)
	}
	resulttest.Golden(t, "bench.golden", b.Bytes())
}

func TestCFloatPrintsLikeC(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{math.NaN(): "-nan", math.Inf(1): "inf", 0.1234: "0.123"} {
		if got := cfloat(3, in); got != want {
			t.Errorf("cfloat(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestBenchWithPercentiles(t *testing.T) {
	t.Parallel()
	res := resulttest.BenchSample()
	o := report.TextOptions{Percentiles: []float64{50, 99.9}}
	var b bytes.Buffer
	if err := BenchCSVHeader(&b, o); err != nil {
		t.Fatal(err)
	}
	if err := BenchCSV(&b, "SET", reporttest.AsTest(t, res), o); err != nil {
		t.Fatal(err)
	}
	if err := BenchQuiet(&b, "SET", reporttest.AsTest(t, res), 0, o); err != nil {
		t.Fatal(err)
	}
	info := BenchInfo{Clients: 50, DataSize: 3, KeepAlive: 1, Percentiles: o.Percentiles}
	if err := BenchFull(&b, "SET", reporttest.AsTest(t, res), info, 0); err != nil {
		t.Fatal(err)
	}
	s := statsOf(reporttest.AsTest(t, res))
	p := benchPercentiles(reporttest.AsTest(t, res), o.Percentiles)
	if p[0] != s.p50 {
		t.Errorf("p50 %v differs from the summary's %v", p[0], s.p50)
	}
	out := b.String()
	testrun.Contains(t, out,
		`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p99.9_latency_ms","max_latency_ms"`+"\n",
		fmt.Sprintf(`"SET","%s","%s","%s","%s","%s","%s"`+"\n", cfloat(2, s.rps), cfloat(3, s.avg), cfloat(3, s.min), cfloat(3, p[0]), cfloat(3, p[1]), cfloat(3, s.max)),
		fmt.Sprintf("SET: %s requests per second, p50=%s msec p99.9=%s msec\n", cfloat(2, s.rps), cfloat(3, p[0]), cfloat(3, p[1])),
		"  latency summary (msec):\n          avg       min       p50     p99.9       max\n",
	)
}
