package sweep

import (
	"math"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/stats"
)

// A step whose queue grows is not sustainable, whatever its percentiles.
//
// At a rate the server cannot keep up with, the requests in flight pile
// up and every request waits longer than the one before: the step's
// latency climbs from its first interval to its last, and a step that
// ends before the queue reaches the bound would pass. Such a step is
// read from its interval series with a one-sided Mann–Kendall test for
// an increasing trend (stats.MannKendall: no assumption on the
// distribution; ties allowed):
//
//	S = Σ_{i<j} sign(x_j − x_i)     large S: later values larger
//
// on two series, the response p50 of each interval and the requests in
// flight at its end, and the step fails as unsustainable only when both
// rise at trendAlpha. Both, because each alone has another reading: a
// p50 that creeps up with a steady queue is the host (its hiccups come
// and go), and in-flight counts that grow while the latency stays flat
// are a burst of arrivals, not a backlog; a queue that grows raises the
// two together (Little's law at a constant rate). The settle is not
// measured, and the drain after the timeline (replies still coming, the
// queue emptying) is left out.
//
// With n intervals the smallest p-value is 1/n! (every value above the
// one before): 5 intervals reach 0.0083, 4 cannot reach 1%. So a step of
// the default 5 s with 1 s intervals fails as unsustainable only when
// both series rise at every interval.
const trendAlpha = 0.01

// stepSeries is a step's measured intervals as the trend test reads them:
// each interval's response p50 (in ms; intervals without a reply are left
// out of this series) and its requests in flight at its end. Only the
// intervals of the timeline count: full ones that the timeline sent into
// (at least half the requests its rate plans for an interval); those of
// the drain after it, where the queue only empties, and the series' last,
// are left out.
func stepSeries(r *scheduler.Result) (p50, inFlight []float64, err error) {
	ivs := r.Intervals
	if len(ivs) > 0 {
		ivs = ivs[:len(ivs)-1]
	}
	planned := r.TargetRate.PerSecond() * r.Interval.Seconds()
	for _, iv := range ivs {
		if r.Interval > 0 && iv.Duration != r.Interval || iv.Counts.Scheduled == 0 || float64(iv.Counts.Scheduled) < planned/2 {
			continue
		}
		inFlight = append(inFlight, float64(iv.InFlight))
		if iv.Response.Empty() {
			continue
		}
		h, err := iv.Response.Histogram()
		if err != nil {
			return nil, nil, err
		}
		p50 = append(p50, float64(h.ValueAtQuantile(50))/1e6)
	}
	return p50, inFlight, nil
}

// pointTrend tests each step of a point for a growing queue and returns
// the step nearest to one (the largest of its two p-values smallest),
// Rising when any step's two p-values are below trendAlpha divided by the
// number of steps (Bonferroni: a point of several steps gets no more
// chances to fail than one of a single step). nil when no step had two
// measured intervals.
func pointTrend(steps []*scheduler.Result) (*report.StepTrend, error) {
	var best *report.StepTrend
	alpha := trendAlpha / float64(max(1, len(steps)))
	for _, st := range steps {
		p50, inFlight, err := stepSeries(st)
		if err != nil {
			return nil, err
		}
		if len(inFlight) < 2 {
			continue // a step shorter than two intervals has no trend
		}
		t := &report.StepTrend{Intervals: len(inFlight), Alpha: trendAlpha}
		t.P50S, t.P50P = stats.MannKendall(p50)
		t.InFlightS, t.InFlightP = stats.MannKendall(inFlight)
		t.Rising = t.P50P < alpha && t.InFlightP < alpha
		t.P50P, t.InFlightP = roundP(t.P50P), roundP(t.InFlightP)
		if best == nil || t.Rising && !best.Rising || t.Rising == best.Rising && max(t.P50P, t.InFlightP) < max(best.P50P, best.InFlightP) {
			best = t
		}
	}
	return best, nil
}

// roundP keeps a p-value to 4 significant digits.
func roundP(p float64) float64 {
	if p <= 0 {
		return 0
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(p)))
	return math.Round(p*scale) / scale
}
