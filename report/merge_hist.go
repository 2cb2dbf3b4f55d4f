package report

import (
	"errors"
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// ErrMerge marks a refusal to merge: documents that are not shards of one
// timeline.
var ErrMerge = errors.New("cannot merge")

// errHistogramOverflow refuses histograms whose samples add up beyond an
// int64.
var errHistogramOverflow = fmt.Errorf("%w: histograms of more than 2^63 samples in all: the sum overflows", ErrMerge)

// addChecked is histo.Add, refusing a sum of more samples than an int64
// counts.
func addChecked(into, from *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if into != nil && from != nil && from.TotalCount() > math.MaxInt64-into.TotalCount() {
		return nil, errHistogramOverflow
	}
	sum, dropped := histo.Add(into, from)
	if dropped > 0 {
		return nil, errDoesNotFit(dropped)
	}
	return sum, nil
}

// addHistograms adds hs (nil entries are absent ones) into a histogram of
// pacer's geometry; nil when all are absent.
func addHistograms(hs []*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if !slices.ContainsFunc(hs, func(h *hdrhistogram.Histogram) bool { return h != nil }) {
		return nil, nil
	}
	sum := histo.New()
	for _, h := range hs {
		var err error
		if sum, err = addChecked(sum, h); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// errDoesNotFit refuses a merge whose histograms have values beyond
// pacer's range.
func errDoesNotFit(dropped int64) error {
	return fmt.Errorf("%d values do not fit pacer's histograms", dropped)
}
