package report

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// What the text rendering (report/text) reads of the judgement rules and
// of the facts' wording that stay here.

// DecideLine is the text report's line on how a test used its budget to
// decide in ("" when it had none).
func DecideLine(t *Test) string { return decideLine(t) }

// PercentileStats are the response percentiles of h as a test's
// response_percentiles hold them, without confidence intervals: what
// the text notes of a test written without them.
func PercentileStats(h *hdrhistogram.Histogram) []Percentile {
	return percentileStats(h, false, ciSource{})
}

// What merging documents (report/merge) reads of the store's histograms
// and tests.

// MergeLatencies adds several parts' histograms (the shards' of a test,
// or of one of its commands) into one test's latencies (see
// mergeLatencies): an error wrapping ErrMerge when they cannot add up.
func MergeLatencies(hs []Histograms) (Latencies, error) { return mergeLatencies(hs) }

// AddHistograms adds hs (nil entries are absent ones) into one histogram
// (see addHistograms).
func AddHistograms(hs []*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	return addHistograms(hs)
}

// MarkIntervals gives each interval the indexes of the events that
// happened in it (see markIntervals).
func MarkIntervals(ivs []Interval, evs []Event) { markIntervals(ivs, evs) }

// LagOf reads the consumers' lag from a stream test's intervals (see
// lagOf).
func LagOf(ivs []Interval, t *Test) *Lag { return lagOf(ivs, t) }

// SummaryOf is h's summary as the JSON keeps it, nil when h is empty.
func SummaryOf(h *hdrhistogram.Histogram) *histo.Summary { return summary(h) }

// Decode decodes the node's response, service and receive-lag histograms
// (nil where it has none).
func (n Node) Decode() ([3]*hdrhistogram.Histogram, error) { return n.decode() }
