package report

import (
	"testing"
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
