package verdict

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
)

// The windows of an SLO (--slo-window) and the latency histograms each
// one merges.

// groupWindows cuts t's interval series into windows of length: interval
// k belongs to window ⌊start/length⌋. A last window shorter than half the
// length (the drain's tail) joins the one before it, so a handful of late
// replies is never judged alone.
func groupWindows(t *report.Test, length time.Duration) ([]*windowGroup, error) {
	series, err := t.Series()
	if err != nil {
		return nil, err
	}
	interval := t.MustFacts().Interval
	if interval <= 0 || len(series) == 0 {
		return nil, usage.Option("slo-window", "{slo-window} needs the test's interval series")
	}
	if length%interval != 0 {
		return nil, usage.Option("slo-window", "{slo-window} %s is not a multiple of the interval %s", length, interval)
	}
	var groups []*windowGroup
	for _, iv := range series {
		k := iv.Start / length
		if len(groups) == 0 || groups[len(groups)-1].start != k*length {
			groups = append(groups, &windowGroup{start: k * length})
		}
		g := groups[len(groups)-1]
		g.dur += iv.Duration
		g.counts.Add(iv.Counts)
		g.resp, g.serv, g.lag = append(g.resp, iv.Response), append(g.serv, iv.Service), append(g.lag, iv.Lag)
		g.recv, g.hiccup = append(g.recv, iv.Receive), append(g.hiccup, iv.Hiccup)
	}
	if n := len(groups); n > 1 && groups[n-1].dur < length/2 {
		last, prev := groups[n-1], groups[n-2]
		prev.dur += last.dur
		prev.counts.Add(last.counts)
		prev.resp, prev.serv, prev.lag = append(prev.resp, last.resp...), append(prev.serv, last.serv...), append(prev.lag, last.lag...)
		prev.recv, prev.hiccup = append(prev.recv, last.recv...), append(prev.hiccup, last.hiccup...)
		groups = groups[:n-1]
	}
	return groups, nil
}

// windows cuts t's interval series into the scopes of windows of length
// (see groupWindows).
func windows(t *report.Test, length time.Duration) ([]scope, error) {
	groups, err := groupWindows(t, length)
	if err != nil {
		return nil, err
	}
	out := make([]scope, 0, len(groups))
	for _, g := range groups {
		sc := scope{start: g.start, dur: g.dur, counts: g.counts}
		if g.dur > 0 {
			sc.rate = float64(g.counts.Completed) / g.dur.Seconds()
		}
		sc.unavailable = report.WorstUnavailable(report.EventsIn(t.Events, g.start, g.start+g.dur))
		var err error
		if sc.resp, err = mergePacked(g.resp); err != nil {
			return nil, err
		}
		if sc.serv, err = mergePacked(g.serv); err != nil {
			return nil, err
		}
		if sc.lag, err = mergePacked(g.lag); err != nil {
			return nil, err
		}
		if sc.recv, err = mergePacked(g.recv); err != nil {
			return nil, err
		}
		if sc.hiccup, err = mergePacked(g.hiccup); err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// Window is one --slo-window window of a test: where it starts (from the
// test's start) and the latencies its SLO clauses are judged on
// (response time; a closed loop's latency from the send), nil when none
// was recorded in it.
type Window struct {
	Start, Duration time.Duration
	Latency         *hdrhistogram.Histogram
}

// LatencyWindows cuts t into the windows --slo-window length judges it
// by, as SLO.Check does, with each window's latency histogram: what a
// confidence interval of a window's percentile is read from.
func LatencyWindows(t *report.Test, length time.Duration) ([]Window, error) {
	groups, err := groupWindows(t, length)
	if err != nil {
		return nil, err
	}
	out := make([]Window, 0, len(groups))
	for _, g := range groups {
		h, err := report.MergeHist(g.resp)
		if err != nil {
			return nil, err
		}
		out = append(out, Window{Start: g.start, Duration: g.dur, Latency: h})
	}
	return out, nil
}

// mergePacked merges packed histograms and summarises the sum.
func mergePacked(ps []histo.Packed) (histo.Summary, error) {
	h, err := report.MergeHist(ps)
	if err != nil {
		return histo.Summary{}, err
	}
	return histo.Summarize(h), nil
}
