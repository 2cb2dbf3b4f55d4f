package histo

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// benchShapes are the histograms the packing benchmarks encode: an empty
// one, a typical one-second interval (10k response times, lognormal around
// 300 µs) and one whose values spread over the whole range, 1 ns to an
// hour (100k values, log-uniform: the widest payload a series meets).
var benchShapes = []struct {
	name string
	fill func(r *Recorder, rng *rand.Rand)
}{
	{"empty", func(*Recorder, *rand.Rand) {}},
	{"lognormal10k", func(r *Recorder, rng *rand.Rand) {
		for range 10_000 {
			r.Record(lognormal(rng))
		}
	}},
	{"fullrange100k", func(r *Recorder, rng *rand.Rand) {
		for range 100_000 {
			r.Record(int64(math.Exp(rng.Float64() * math.Log(float64(Highest)))))
		}
	}},
}

// lognormal is a response time: median 300 µs, a long right tail.
func lognormal(rng *rand.Rand) int64 {
	return int64(math.Exp(math.Log(300e3) + 0.6*rng.NormFloat64()))
}

func benchHistogram(fill func(*Recorder, *rand.Rand)) (*Recorder, *hdrhistogram.Histogram) {
	r := NewRecorder()
	fill(r, rand.New(rand.NewPCG(11, 12)))
	return r, r.Snapshot()
}

// BenchmarkPack packs a histogram as an interval series does, once per
// interval and recorder.
func BenchmarkPack(b *testing.B) {
	for _, s := range benchShapes {
		_, h := benchHistogram(s.fill)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Pack(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode encodes a histogram (Pack skips the encoding of an empty
// histogram with pacer's geometry; Encode does not).
func BenchmarkEncode(b *testing.B) {
	for _, s := range benchShapes {
		_, h := benchHistogram(s.fill)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeltaPack is an interval series' whole path for one recorder:
// Take the interval's counts, then pack them, either through a histogram
// (Pack(Delta.Histogram()), as series do now) or straight from the counts
// (Delta.Pack).
func BenchmarkDeltaPack(b *testing.B) {
	for _, s := range benchShapes {
		for _, via := range []string{"histogram", "counts"} {
			b.Run(s.name+"/"+via, func(b *testing.B) {
				r := NewRecorder()
				rng := rand.New(rand.NewPCG(11, 12))
				d := NewDelta(r)
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					s.fill(r, rng)
					b.StartTimer()
					d.Take()
					var err error
					if via == "histogram" {
						_, err = Pack(d.Histogram())
					} else {
						_, err = d.Pack()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
