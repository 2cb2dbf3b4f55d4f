package histo

import (
	"errors"
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Summary is the fixed set of statistics pacer reports for a histogram, in
// milliseconds. Percentiles are HdrHistogram's: the highest value equivalent
// (within 3 significant digits) to the recorded value at that rank.
type Summary struct {
	Count int64   `json:"-"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
	Max   float64 `json:"max"`
}

// Metric returns a Summary field by its JSON name (min, mean, p50, p90,
// p95, p99, p99.9, p99.99, max).
func (s Summary) Metric(name string) (float64, bool) {
	switch name {
	case "min":
		return s.Min, true
	case "mean":
		return s.Mean, true
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "p99.9":
		return s.P999, true
	case "p99.99":
		return s.P9999, true
	case "max":
		return s.Max, true
	}
	return 0, false
}

// Percentiles are the ranks a Summary reports, in percent.
var Percentiles = []float64{50, 90, 95, 99, 99.9, 99.99}

// Summarize computes the Summary of h. An empty histogram gives all zeros.
func Summarize(h *hdrhistogram.Histogram) Summary {
	if h == nil || h.TotalCount() == 0 {
		return Summary{}
	}
	p := h.ValueAtPercentiles(Percentiles)
	return Summary{
		Count: h.TotalCount(),
		Min:   Millis(h.Min()),
		Mean:  math.Round(h.Mean()) / 1e6, // whole nanoseconds
		P50:   Millis(p[50]),
		P90:   Millis(p[90]),
		P95:   Millis(p[95]),
		P99:   Millis(p[99]),
		P999:  Millis(p[99.9]),
		P9999: Millis(p[99.99]),
		Max:   Millis(h.Max()),
	}
}

// Millis converts nanoseconds to milliseconds.
func Millis(ns int64) float64 { return float64(ns) / 1e6 }

// Encode returns the base64 text of the standard HdrHistogram V2 compressed
// encoding of h, readable by the Java, C, Go and Rust implementations; ""
// for nil (an absent histogram, as Decode reads it back).
func Encode(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// Decode reads a histogram written by Encode (or by any HdrHistogram
// implementation's V2 compressed encoding).
func Decode(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return nil, errors.New("decode histogram: empty string")
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Add adds from to into and returns the sum: into itself when it is not
// nil, otherwise a copy of from, so a sum never shares a histogram it was
// given. Nil stands for an absent histogram: Add(nil, nil) is nil. It also
// returns the values of from that did not fit into's range (none when both
// have pacer's geometry, or into was nil). Every merge of histograms in
// pacer goes through it.
func Add(into, from *hdrhistogram.Histogram) (*hdrhistogram.Histogram, int64) {
	switch {
	case from == nil:
		return into, 0
	case into == nil:
		return hdrhistogram.Import(from.Export()), 0
	}
	return into, into.Merge(from)
}

// Copy returns a histogram of its own with h's values (nil for nil).
func Copy(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	c, _ := Add(nil, h)
	return c
}

// Merge adds every histogram in hs into a new histogram with pacer's
// geometry and returns it with the number of values that did not fit (zero
// unless an input has a wider range than pacer's).
func Merge(hs ...*hdrhistogram.Histogram) (*hdrhistogram.Histogram, int64) {
	out := New()
	var dropped int64
	for _, h := range hs {
		var d int64
		out, d = Add(out, h)
		dropped += d
	}
	return out, dropped
}
