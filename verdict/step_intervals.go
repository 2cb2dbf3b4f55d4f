package verdict

import (
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
)

// PercentileIntervals computes, for each clause of the SLO that bounds a
// latency percentile from above, the 95% interval of that percentile
// (histo.PercentileCI) of h, a step's pooled latencies (response time;
// a closed loop's latency from the send), by clause index, each decided
// against its bound (pass, uncertain or fail: see Step). With windows
// (--slo-window) each window's interval is decided on its own: a clause
// fails when one window's interval lies beyond its bound (a window
// without samples fails, as SLO.Check fails it), passes when every
// window's lies within it, and is uncertain otherwise; the interval
// shown is that window's.
func PercentileIntervals(sr *report.SLOResult, h *hdrhistogram.Histogram, windows []Window) map[int]report.StepInterval {
	if sr == nil {
		return nil
	}
	out := map[int]report.StepInterval{}
	for i, c := range sr.Clauses {
		p, ok := percentileOfMetric(c.Metric)
		if !ok || c.Unit != "ms" || !strings.HasPrefix(c.Op, "<") {
			continue
		}
		if windows == nil {
			out[i] = clauseInterval(c, h, p)
			continue
		}
		var pick *report.StepInterval
		rank := func(iv report.StepInterval) int {
			return map[string]int{string(StepPass): 0, string(StepUncertain): 1, string(StepFail): 2}[iv.Decision]
		}
		for _, w := range windows {
			iv := clauseInterval(c, w.Latency, p)
			if w.Latency == nil || w.Latency.TotalCount() == 0 {
				iv.Decision = string(StepFail)
			}
			start := w.Start.Seconds()
			iv.WindowS = &start
			nearer := pick != nil && rank(iv) == rank(*pick) && iv.Decision == string(StepPass) && iv.Hi != nil && (pick.Hi == nil || *iv.Hi > *pick.Hi)
			if pick == nil || rank(iv) > rank(*pick) || nearer {
				pick = &iv
			}
		}
		if pick != nil {
			out[i] = *pick
		}
	}
	return out
}

// clauseInterval is the 95% interval of percentile p of h for clause c,
// decided against its bound.
func clauseInterval(c report.ClauseResult, h *hdrhistogram.Histogram, p float64) report.StepInterval {
	iv := report.StepInterval{Clause: c.Clause, Metric: c.Metric, Bound: c.Bound, Decision: string(StepUncertain)}
	lo, hi, okLo, okHi := histo.PercentileCI(h, p)
	met := func(ms float64) bool {
		if c.Op == "<" {
			return ms < c.Bound
		}
		return ms <= c.Bound
	}
	if okLo {
		v := round6(histo.Millis(lo))
		iv.Lo = &v
	}
	if okHi {
		v := round6(histo.Millis(hi))
		iv.Hi = &v
	}
	switch {
	case iv.Hi != nil && met(*iv.Hi):
		iv.Decision = string(StepPass)
	case iv.Lo != nil && !met(*iv.Lo):
		iv.Decision = string(StepFail)
	}
	return iv
}

// round6 keeps an interval's end in ms to the nanosecond.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
