package histo_test

import (
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// Connection readers record into one Recorder at once (lock-free, no
// allocation); a snapshot is a plain HdrHistogram with pacer's geometry,
// in nanoseconds. Summaries are in milliseconds.
func ExampleRecorder() {
	r := histo.NewRecorder()
	for i := range int64(1000) {
		r.Record((i + 1) * int64(time.Microsecond)) // 1 µs … 1 ms
	}
	h := r.Snapshot()
	s := histo.Summarize(h)
	fmt.Println(h.TotalCount(), "values")
	fmt.Printf("p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", s.P50, s.P99, s.Max)
	// Output:
	// 1000 values
	// p50 0.500 ms, p99 0.990 ms, max 1.000 ms
}

// Histograms of intervals, runs, nodes or machines add up exactly: merge
// them, and the percentiles are those of all the values together.
func ExampleMerge() {
	a, b := histo.New(), histo.New()
	for range 99 {
		a.RecordValue(int64(time.Millisecond))
	}
	b.RecordValue(int64(time.Second)) // one stall, on another machine
	all, dropped := histo.Merge(a, b)
	fmt.Println(all.TotalCount(), "values,", dropped, "dropped")
	fmt.Println("p99", time.Duration(all.ValueAtQuantile(99)).Round(time.Millisecond))
	fmt.Println("max", time.Duration(all.Max()).Round(time.Millisecond))
	// Output:
	// 100 values, 0 dropped
	// p99 1ms
	// max 1s
}

// A histogram travels as HdrHistogram's V2 compressed encoding, in base64:
// what pacer's JSON result holds, readable by the Java, C, Go and Rust
// libraries.
func ExampleEncode() {
	h := histo.New()
	h.RecordValue(1500)
	text, err := histo.Encode(h)
	if err != nil {
		log.Fatal(err)
	}
	back, err := histo.Decode(text)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.TotalCount(), back.Max() >= 1500)
	// Output: 1 true
}

// The 95% confidence interval of a percentile says how far a measured p99
// can be trusted: with few values it is wide, and near the end of a small
// sample it has no upper bound at all.
func ExamplePercentileCI() {
	for _, n := range []int64{100, 10_000} {
		h := histo.New()
		for i := range n {
			h.RecordValue((i + 1) * int64(time.Millisecond) / (n / 100)) // evenly up to 100 ms
		}
		lo, hi, okLo, okHi := histo.PercentileCI(h, 99)
		bound := func(v int64, ok bool) string {
			if !ok {
				return "none"
			}
			return time.Duration(v).Round(100 * time.Microsecond).String()
		}
		fmt.Printf("%d values: p99 from %s to %s\n", n, bound(lo, okLo), bound(hi, okHi))
	}
	// Output:
	// 100 values: p99 from 97ms to none
	// 10000 values: p99 from 98.8ms to 99.2ms
}
