package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// partialIntervals are n 1 s intervals of 200 requests each, with every
// series' histogram drawn at random and a server process's share.
func partialIntervals(tb testing.TB, n int) []Interval {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	packed := func(mean float64) histo.Packed {
		h := histo.New()
		for range 200 {
			if err := h.RecordValue(int64(rng.ExpFloat64() * mean)); err != nil {
				tb.Fatal(err)
			}
		}
		p, err := histo.Pack(h)
		if err != nil {
			tb.Fatal(err)
		}
		return p
	}
	ivs := make([]Interval, n)
	for i := range ivs {
		ivs[i] = Interval{Start: time.Duration(i) * time.Second, Duration: time.Second, BytesSent: 100, BytesReceived: 50,
			Counts:   Counts{Scheduled: 200, Sent: 200, Completed: 199, Errors: uint64(i % 2)},
			Response: packed(2e5), Service: packed(1e5), Lag: packed(5e4), Receive: packed(2e4)}
		if i%3 != 0 {
			ivs[i].Hiccup = packed(1e5)
		}
	}
	return ivs
}

// TestPartialsAddOnlyWhatIsNew: one look after another, each with the
// intervals of the last and more, Partials gives what Partial gives from
// scratch; intervals that do not begin with those summed (another run's)
// are summed afresh; and a caller may change the histograms it got.
func TestPartialsAddOnlyWhatIsNew(t *testing.T) {
	ivs := partialIntervals(t, 12)
	proto := &Result{Name: "get", Mode: "open", Interval: time.Second, ReceiveClock: ReceiveKernel}
	p := NewPartials(proto)
	check := func(ivs []Interval) {
		t.Helper()
		got, err := p.Result(ivs)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Response.RecordValue(1); err != nil { // the caller's to change
			t.Fatal(err)
		}
		want, err := Partial(proto, ivs)
		if err != nil {
			t.Fatal(err)
		}
		if got.Counts != want.Counts || got.Window != want.Window || got.BytesSent != want.BytesSent || got.BytesReceived != want.BytesReceived || got.Stamped != want.Stamped || len(got.Intervals) != len(ivs) {
			t.Fatalf("%d intervals: %+v, want %+v", len(ivs), got.Counts, want.Counts)
		}
		// The histograms as a reader of the intervals adds them up.
		merged := func(of func(Interval) histo.Packed) *hdrhistogram.Histogram {
			var hs []*hdrhistogram.Histogram
			for _, iv := range ivs {
				if of(iv).Empty() {
					continue
				}
				h, err := of(iv).Histogram()
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
			if len(hs) == 0 {
				return nil // Partial's hiccups: absent, as the run's
			}
			h, _ := histo.Merge(hs...)
			return h
		}
		resp := merged(func(iv Interval) histo.Packed { return iv.Response })
		if err := resp.RecordValue(1); err != nil {
			t.Fatal(err)
		}
		pairs := [][2]*hdrhistogram.Histogram{{got.Response, resp}, {got.Service, merged(func(iv Interval) histo.Packed { return iv.Service })},
			{got.Lag, merged(func(iv Interval) histo.Packed { return iv.Lag })}, {got.Receive, merged(func(iv Interval) histo.Packed { return iv.Receive })},
			{got.Hiccups, merged(func(iv Interval) histo.Packed { return iv.Hiccup })}}
		for k, h := range pairs {
			if (h[0] == nil) != (h[1] == nil) || h[0] != nil && !h[0].Equals(h[1]) {
				t.Fatalf("%d intervals: series %d differs from Partial's", len(ivs), k)
			}
		}
	}
	for _, n := range []int{1, 2, 5, 5, 6, 12} { // the first without hiccups
		check(ivs[:n])
	}
	check(partialIntervals(t, 4)) // other intervals than those summed
	check(ivs[:3])                // fewer than summed
}

// BenchmarkPartials: the sums a run's looks take, one every two
// intervals of a minute's budget, from scratch (Partial) and added to
// (Partials).
func BenchmarkPartials(b *testing.B) {
	ivs := partialIntervals(b, 60)
	proto := &Result{Name: "get", Mode: "open", Interval: time.Second}
	for _, each := range []bool{true, false} {
		b.Run(fmt.Sprintf("from-scratch=%v", each), func(b *testing.B) {
			for b.Loop() {
				p := NewPartials(proto)
				for n := 2; n <= len(ivs); n += 2 {
					var err error
					if each {
						_, err = Partial(proto, ivs[:n])
					} else {
						_, err = p.Result(ivs[:n])
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
