package report

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// nodeHist records n response times from base µs up, one µs apart.
func nodeHist(n int, baseUs int64) *hdrhistogram.Histogram {
	h := histo.New()
	for i := range int64(n) {
		_ = h.RecordValue((baseUs + i) * 1000)
	}
	return h
}
