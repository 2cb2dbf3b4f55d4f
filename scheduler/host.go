package scheduler

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// hostWatch measures the client machine during a run: how late a sleeping
// goroutine wakes (host hiccups) and how busy the CPUs were.
type hostWatch struct{}

// recorder is the hiccup meter's recorder (nil: no meter).
func (h *hostWatch) recorder() *histo.Recorder { return nil }

func (h *hostWatch) stop() *hdrhistogram.Histogram { return nil }
