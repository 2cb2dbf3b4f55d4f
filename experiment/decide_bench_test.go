package experiment

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// BenchmarkLook is what a --decide-within look costs: three 1 s intervals
// of 1,000 requests, each with its five histograms, judged against
// p99<=1ms. The requests intended while a look judges wait for its CPU.
// (2026-12-07, the 2-CPU development VM, three interleaved runs, medians:
// 7.8 ms and 6.1 MB a look; 11.4 ms and 8.4 MB when a look's test encoded
// its histograms.)
func BenchmarkLook(b *testing.B) {
	slo, err := verdict.ParseSLO("p99<=1ms")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	packed := func(n int, mean time.Duration) histo.Packed {
		h := histo.New()
		for range n {
			if err := h.RecordValue(int64(rng.ExpFloat64() * float64(mean))); err != nil {
				b.Fatal(err)
			}
		}
		p, err := histo.Pack(h)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	var ivs []scheduler.Interval
	for i := range 3 {
		ivs = append(ivs, scheduler.Interval{Start: time.Duration(i) * time.Second, Duration: time.Second,
			Counts:   scheduler.Counts{Scheduled: 1000, Sent: 1000, Completed: 1000},
			Response: packed(1000, 100*time.Microsecond), Service: packed(1000, 50*time.Microsecond),
			Lag: packed(1000, 20*time.Microsecond), Receive: packed(1000, 10*time.Microsecond), Hiccup: packed(1000, 200*time.Microsecond)})
	}
	for b.Loop() {
		k := &decider{d: Decide{SLO: slo}, plan: decidePlan{looks: 3},
			proto: &scheduler.Result{Name: "get", Mode: "open", TargetRate: timeline.RatePerSecond(1000), Connections: 1, Interval: time.Second, ReceiveClock: scheduler.ReceiveKernel},
			ext:   scheduler.Extension{PlannedLooks: 3}}
		if !k.look(ivs) {
			b.Fatalf("the look did not pass: %s", k.ext.WentOn)
		}
	}
}
