package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
)

func TestNewRepeats(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	h := histo.New()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 1000)
	}
	stats := percentileStats(h, true)
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
	if err := writePercentileNotes(&b, h, true); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "insufficient samples: p99.9, p99.99 (1000 samples") || !strings.Contains(out, "p99.99 [") || !strings.Contains(out, ", …]") {
		t.Errorf("notes:\n%s", out)
	}
	if percentileStats(histo.New(), true) != nil {
		t.Error("stats of an empty histogram")
	}
}
