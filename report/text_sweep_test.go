package report_test

import (
	"bytes"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
)

func TestPercentileStats(t *testing.T) {
	t.Parallel()
	// One run of 10 intervals of 100 values each, 1 to 1000 µs in all.
	h := histo.New()
	var ivs []scheduler.Interval
	for k := range 10 {
		ih := histo.New()
		for v := int64(1); v <= 100; v++ {
			x := (int64(k)*100 + v) * 1000
			_ = h.RecordValue(x)
			_ = ih.RecordValue(x)
		}
		p, err := histo.Pack(ih)
		if err != nil {
			t.Fatal(err)
		}
		ivs = append(ivs, scheduler.Interval{Start: time.Duration(k) * time.Second, Duration: time.Second, Response: p})
	}
	ps := report.PercentileStatsCI(h, nil, ivs)
	want := map[string]bool{"p50": false, "p90": false, "p95": false, "p99": false, "p99.9": true, "p99.99": true}
	for _, s := range ps {
		if s.InsufficientSamples != want[s.P] {
			t.Errorf("%s: insufficient %v, want %v (%v beyond)", s.P, s.InsufficientSamples, want[s.P], s.SamplesBeyond)
		}
		if len(s.CI95) != 2 || s.CI95[0] == nil || s.CI95Method != "blocks" || s.CI95N != 10 {
			t.Errorf("%s: ci95 %v by %q over %d", s.P, s.CI95, s.CI95Method, s.CI95N)
			continue
		}
		if s.CI95[1] != nil && (*s.CI95[0] > s.ValueMs || *s.CI95[1] < s.ValueMs) {
			t.Errorf("%s: %v ms outside its interval [%v, %v]", s.P, s.ValueMs, *s.CI95[0], *s.CI95[1])
		}
	}
	if ps[5].CI95[1] != nil {
		t.Error("p99.99 of 1000 samples got an upper bound")
	}
	tt := report.WithResponse(ps, h)
	var b bytes.Buffer
	if err := text.WriteNotes(&b, tt, true, nil); err != nil {
		t.Fatal(err)
	}
	testrun.Contains(t, b.String(), "insufficient samples: p99.9, p99.99 (1000 samples", "block bootstrap over this run's 10 intervals", "p99.99 [", ", …]")
	// Three runs: the spread between them.
	runs := []*hdrhistogram.Histogram{histo.New(), histo.New(), histo.New()}
	for i, r := range runs {
		for v := int64(1); v <= 1000; v++ {
			_ = r.RecordValue(v * 1000 * int64(i+1))
		}
	}
	pooled, _ := histo.Merge(runs...)
	rs := report.PercentileStatsCI(pooled, runs, ivs)
	if rs[1].CI95Method != "runs" || rs[1].CI95N != 3 || rs[1].CI95[0] == nil || *rs[1].CI95[0] > rs[1].ValueMs {
		t.Errorf("p90 of 3 runs 1, 2 and 3 ms apart: %+v", rs[1])
	}
	tt = report.WithResponse(rs, pooled)
	b.Reset()
	_ = text.WriteNotes(&b, tt, true, nil)
	testrun.Contains(t, b.String(), "from the spread between the 3 runs")
	// Too few intervals for one run: none.
	if few := report.PercentileStatsCI(h, nil, ivs[:3]); few[3].CI95Method != "none" || few[3].CI95[0] != nil {
		t.Errorf("3 intervals: %+v", few[3])
	}
	if report.PercentileStatsCI(histo.New(), nil, nil) != nil {
		t.Error("stats of an empty histogram")
	}
}
