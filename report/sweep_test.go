package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
)

func TestLittle(t *testing.T) {
	for _, c := range []struct {
		name               string
		clients, pipeline  int
		throughput, meanMs float64
		littleMs, ratio    float64
		mismatch           bool
	}{
		// 10 clients, 10k req/s: each request spends 1 ms in flight.
		{"server-bound", 10, 1, 10000, 1.0, 1.0, 1.0, false},
		{"within 10%", 10, 1, 10000, 0.92, 1.0, 1.0 / 0.92, false},
		// Half the time is spent between a reply and the next send.
		{"client-bound", 10, 1, 5000, 1.0, 2.0, 2.0, true},
		// 4 × 16 = 64 in flight at 64k req/s: 1 ms.
		{"pipelined", 4, 16, 64000, 1.0, 1.0, 1.0, false},
		{"nothing completed", 10, 1, 0, 1.0, 0, 0, false},
	} {
		p := ClosedPoint{Clients: c.clients, Pipeline: c.pipeline, Throughput: c.throughput, MeanMs: c.meanMs}
		p.Little()
		if !near(p.LittleMs, c.littleMs) || !near(p.LittleRatio, c.ratio) || p.LittleMismatch != c.mismatch {
			t.Errorf("%s: little %.4f ms, ratio %.4f, mismatch %v; want %.4f, %.4f, %v",
				c.name, p.LittleMs, p.LittleRatio, p.LittleMismatch, c.littleMs, c.ratio, c.mismatch)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestFindKnee(t *testing.T) {
	pt := func(x, p99 float64) ClosedPoint { return ClosedPoint{Throughput: x, P99Ms: p99} }
	for _, c := range []struct {
		name string
		pts  []ClosedPoint
		want int
	}{
		{"none: throughput keeps rising", []ClosedPoint{pt(10, 1), pt(50, 1.1), pt(100, 1.5)}, -1},
		// +2% throughput, +100% p99 at the third point.
		{"saturation", []ClosedPoint{pt(10, 1), pt(50, 1.1), pt(51, 2.2), pt(51, 9)}, 2},
		// Flat throughput but p99 only +10%: not yet.
		{"flat and calm", []ClosedPoint{pt(100, 1), pt(101, 1.1), pt(102, 1.5)}, 2},
		{"exactly 5% gain is still a gain", []ClosedPoint{pt(100, 1), pt(105, 2)}, -1},
		{"exactly 20% growth is not the knee", []ClosedPoint{pt(100, 1), pt(100, 1.2)}, -1},
		{"a point with nothing measured is skipped", []ClosedPoint{pt(0, 0), pt(100, 1), pt(100, 5)}, 2},
		{"one point", []ClosedPoint{pt(100, 1)}, -1},
	} {
		if got := FindKnee(c.pts); got != c.want {
			t.Errorf("%s: knee %d, want %d", c.name, got, c.want)
		}
	}
}

func TestNewRepeats(t *testing.T) {
	figs := []map[string]float64{
		{"achieved_rate": 113000, "p50": 0.2, "p99": 1.0, "errors_pct": 0},
		{"achieved_rate": 125000, "p50": 0.3, "p99": 0.8, "errors_pct": 0},
		{"achieved_rate": 120000, "p50": 0.1, "errors_pct": 1}, // no p99: not counted
	}
	rep := NewRepeats(figs, nil)
	for _, c := range []struct {
		name          string
		med, min, max float64
	}{
		{"achieved_rate", 120000, 113000, 125000},
		{"p50", 0.2, 0.1, 0.3},
		{"p99", 0.9, 0.8, 1.0},
		{"errors_pct", 0, 0, 1},
	} {
		if rep.Median[c.name] != c.med || rep.Min[c.name] != c.min || rep.Max[c.name] != c.max {
			t.Errorf("%s: median %v min %v max %v; want %v %v %v", c.name, rep.Median[c.name], rep.Min[c.name], rep.Max[c.name], c.med, c.min, c.max)
		}
	}
	if _, ok := rep.Median["p99.9"]; ok || rep.N != 3 {
		t.Errorf("n %d, p99.9 present without samples", rep.N)
	}
}

func TestPercentileStats(t *testing.T) {
	h := histo.New()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 1000)
	}
	stats := PercentileStats(h, true)
	want := map[string]bool{"p50": false, "p90": false, "p95": false, "p99": false, "p99.9": true, "p99.99": true}
	for _, s := range stats {
		if s.InsufficientSamples != want[s.P] {
			t.Errorf("%s: insufficient %v, want %v (%v beyond)", s.P, s.InsufficientSamples, want[s.P], s.SamplesBeyond)
		}
		if len(s.CI95) != 2 || s.CI95[0] == nil {
			t.Errorf("%s: ci95 %v", s.P, s.CI95)
			continue
		}
		if s.CI95[1] != nil && (*s.CI95[0] > s.ValueMs || *s.CI95[1] < s.ValueMs) {
			t.Errorf("%s: %v ms outside its interval [%v, %v]", s.P, s.ValueMs, *s.CI95[0], *s.CI95[1])
		}
	}
	if stats[5].CI95[1] != nil {
		t.Error("p99.99 of 1000 samples got an upper bound")
	}
	var b bytes.Buffer
	if err := WritePercentileNotes(&b, h, true); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "insufficient samples: p99.9, p99.99 (1000 samples") || !strings.Contains(out, "p99.99 [") || !strings.Contains(out, ", …]") {
		t.Errorf("notes:\n%s", out)
	}
	if PercentileStats(histo.New(), true) != nil {
		t.Error("stats of an empty histogram")
	}
}
