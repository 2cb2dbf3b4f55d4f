package report

import (
	"math"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/usage"
)

// MaxPercentiles bounds the length of a --percentiles list: each is a
// column of a table.
const MaxPercentiles = 12

// TextOptions change what the text output prints. The zero value prints
// each format's own defaults.
type TextOptions struct {
	// Percentiles, when not empty, are the percentiles the latency tables
	// print (between min/mean and max), in place of the defaults.
	Percentiles []float64
}

// ParsePercentiles reads a --percentiles list such as "50,90,99,99.9":
// numbers above 0 and at most 100, returned sorted without duplicates.
func ParsePercentiles(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usage.Option("percentiles", "{percentiles} %q: want a comma-separated list such as 50,90,99,99.9", s)
	}
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimPrefix(part, "p"), "P"), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, usage.Option("percentiles", "{percentiles} %q: %q is not a number", s, part)
		}
		if v <= 0 || v > 100 {
			return nil, usage.Option("percentiles", "{percentiles} %q: %s is not a percentile above 0 and at most 100", s, part)
		}
		out = append(out, v)
	}
	sort.Float64s(out)
	uniq := out[:1]
	for _, v := range out[1:] {
		if v != uniq[len(uniq)-1] {
			uniq = append(uniq, v)
		}
	}
	if len(uniq) > MaxPercentiles {
		return nil, usage.Option("percentiles", "{percentiles} %q: %d percentiles, at most %d", s, len(uniq), MaxPercentiles)
	}
	return uniq, nil
}

// PercentileLabel names a percentile as the tables do: p50, p99.9.
func PercentileLabel(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// PercentileMillis returns h's value at each percentile in milliseconds
// (HdrHistogram's: the highest value equivalent to the one at that rank);
// zeros when h holds no samples. ps must be sorted (ParsePercentiles).
func PercentileMillis(h *hdrhistogram.Histogram, ps []float64) []float64 {
	out := make([]float64, len(ps))
	if h == nil || h.TotalCount() == 0 {
		return out
	}
	m := h.ValueAtPercentiles(ps)
	for i, p := range ps {
		out[i] = histo.Millis(m[p])
	}
	return out
}

// PercentileMetric names a percentile a Summary has ("p99.9"), "" for
// others.
func PercentileMetric(p float64) string {
	for _, q := range histo.Percentiles {
		if math.Abs(p-q) < 1e-9 {
			return "p" + strconv.FormatFloat(q, 'f', -1, 64)
		}
	}
	return ""
}
