package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

func TestParsePercentiles(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"50,90,99,99.9,99.99": "[50 90 99 99.9 99.99]",
		"99, 50,99.9,50,p90":  "[50 90 99 99.9]",
		"100":                 "[100]",
		"0.001":               "[0.001]",
	} {
		got, err := ParsePercentiles(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParsePercentiles(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "0", "-1", "100.1", "abc", "NaN", "Inf", "50,,90", "50;90", "1,2,3,4,5,6,7,8,9,10,11,12,13"} {
		if got, err := ParsePercentiles(in); err == nil {
			t.Errorf("ParsePercentiles(%q) = %v, want an error", in, got)
		} else if strings.Contains(usagetest.CLI(err), "\n") || !strings.HasPrefix(usagetest.CLI(err), "--percentiles ") {
			t.Errorf("ParsePercentiles(%q): %q is not one line naming the flag", in, err)
		}
	}
}

// The chosen percentiles are computed as the Summary computes its own.
func TestPercentileMillisAgreesWithSummary(t *testing.T) {
	t.Parallel()
	h := resulttest.Sample().Response
	s := histo.Summarize(h)
	got := PercentileMillis(h, []float64{50, 90, 95, 99, 99.9, 99.99})
	want := []float64{s.P50, s.P90, s.P95, s.P99, s.P999, s.P9999}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PercentileMillis %v, Summary %v", got, want)
	}
	if got := PercentileMillis(histo.New(), []float64{50}); got[0] != 0 {
		t.Errorf("empty histogram: %v", got)
	}
}
