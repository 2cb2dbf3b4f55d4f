package drivertest

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// CheckSeries verifies that a series adds up to what it cuts: counts sum
// to counts, each histogram's intervals merge to the histogram exactly
// (same count, same p99.9 and max), intervals are contiguous from 0.
func CheckSeries(t testing.TB, what string, ivs []scheduler.Interval, d time.Duration, total scheduler.Counts, hs [3]*hdrhistogram.Histogram) {
	t.Helper()
	CheckSeriesFrom(t, what, 0, ivs, d, total, hs)
}

// CheckSeriesFrom is CheckSeries for a series whose first interval starts
// at origin (the end of a warmup).
func CheckSeriesFrom(t testing.TB, what string, origin time.Duration, ivs []scheduler.Interval, d time.Duration, total scheduler.Counts, hs [3]*hdrhistogram.Histogram) {
	t.Helper()
	if len(ivs) == 0 {
		t.Fatalf("%s: no intervals", what)
	}
	var sum scheduler.Counts
	merged := [3]*hdrhistogram.Histogram{histo.New(), histo.New(), histo.New()}
	for k, iv := range ivs {
		if iv.Start != origin+time.Duration(k)*d || (k < len(ivs)-1 && iv.Duration != d) || iv.Duration < 0 {
			t.Fatalf("%s: interval %d starts at %v and lasts %v, with intervals of %v", what, k, iv.Start, iv.Duration, d)
		}
		sum.Add(iv.Counts)
		for i, p := range [3]histo.Packed{iv.Response, iv.Service, iv.Lag} {
			h, err := p.Histogram()
			if err != nil {
				t.Fatalf("%s: interval %d: %v", what, k, err)
			}
			if h.TotalCount() != p.Summary.Count {
				t.Fatalf("%s: interval %d: summary of %d samples for %d", what, k, p.Summary.Count, h.TotalCount())
			}
			merged[i].Merge(h)
		}
	}
	if sum != total {
		t.Fatalf("%s: intervals sum to %+v, the test counts %+v", what, sum, total)
	}
	for i, h := range hs {
		if h == nil {
			if merged[i].TotalCount() != 0 {
				t.Fatalf("%s: histogram %d: intervals hold %d samples of a histogram the test does not have", what, i, merged[i].TotalCount())
			}
			continue
		}
		m := merged[i]
		if m.TotalCount() != h.TotalCount() || m.ValueAtQuantile(99.9) != h.ValueAtQuantile(99.9) || m.Max() != h.Max() || m.Min() != h.Min() {
			t.Fatalf("%s: histogram %d: intervals merge to %d samples (p99.9 %d, max %d), the test has %d (p99.9 %d, max %d)",
				what, i, m.TotalCount(), m.ValueAtQuantile(99.9), m.Max(), h.TotalCount(), h.ValueAtQuantile(99.9), h.Max())
		}
	}
}
