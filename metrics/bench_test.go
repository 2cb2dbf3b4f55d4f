package metrics

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// BenchmarkScrape gathers and encodes one open test (five histograms with
// samples from 20 µs to 20 ms) as Prometheus text: the generator's CPU per
// scrape, with the old 21 power-of-two bounds and the default 49.
func BenchmarkScrape(b *testing.B) {
	var pow2 []time.Duration
	for k := range 21 {
		pow2 = append(pow2, 10*time.Microsecond<<k)
	}
	for _, bounds := range [][]time.Duration{pow2, DefaultBuckets()} {
		b.Run("buckets="+strconv.Itoa(len(bounds)), func(b *testing.B) {
			c := NewCollector(bounds)
			reg := prometheus.NewRegistry()
			reg.MustRegister(c)
			f := newFake(true)
			for i := range f.hists {
				if f.hists[i] == nil {
					f.hists[i] = newFake(true).hists[histResponse]
				}
				for v := int64(20_000); v < 20_000_000; v = v*1001/1000 + 1 {
					f.hists[i].Record(v)
				}
			}
			defer c.watch("GET", ModeOpen, f)()
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, mf := range mfs {
					if err := enc.Encode(mf); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/scrape")
		})
	}
}
