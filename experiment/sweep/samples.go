package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

// Steps long enough to judge a percentile.
//
// A percentile p of n samples rests on the n·(1−p) samples beyond it and
// needs histo.MinTailSamples of them: p99.9 at 1000/s over 5 s has 5, and
// its value is one of the five largest samples. So an open sweep measures
// a step whose rate gives its SLO's highest percentile clause too few
// samples for longer, up to stepCap, and a step that still has too few is
// not judged at all (neither pass nor fail: see stepVerdict).
const (
	// stepStretch and maxStretchedStep bound a lengthened step: at most
	// stepStretch × --step-duration and at most maxStretchedStep, but
	// never shorter than --step-duration itself.
	stepStretch      = 6
	maxStretchedStep = time.Minute
	// tailMargin: a step is planned for tailMargin × MinTailSamples
	// beyond its percentile, so that a few replies short (errors, a
	// Poisson count below its mean) do not leave it unjudged.
	tailMargin = 1.1
)

// stepCap is the longest a step of --step-duration base is lengthened to.
func stepCap(base time.Duration) time.Duration {
	return max(base, min(stepStretch*base, maxStretchedStep))
}

// sampleRule plans the measured duration of an open sweep's steps from
// the SLO's most demanding percentile clause.
type sampleRule struct {
	// metric is that clause's metric ("p99.9"; "" when the SLO bounds no
	// percentile) and p its percentile in percent.
	metric string
	p      float64
	// base is --step-duration, cap the longest step (stepCap).
	base, cap time.Duration
	// window is --slo-window: the clauses are judged per window, whose
	// samples a longer step does not add to.
	window time.Duration
}

func newSampleRule(slo verdict.SLO, base time.Duration) sampleRule {
	r := sampleRule{base: base, cap: stepCap(base), window: slo.Window}
	for _, m := range slo.Metrics() {
		if p, ok := percentileOf(m); ok && p > r.p {
			r.metric, r.p = m, p
		}
	}
	return r
}

// percentileOf reads a percentile metric (p99.9 → 99.9); false for the
// others (min, mean, max, errors, ...).
func percentileOf(metric string) (float64, bool) {
	if !strings.HasPrefix(metric, "p") {
		return 0, false
	}
	p, err := strconv.ParseFloat(metric[1:], 64)
	if err != nil || !(p > 0 && p < 100) {
		return 0, false
	}
	return p, true
}

// duration is the measured duration of a step at rate: base, or longer
// (to the next 100 ms, at most cap) when base gives the percentile fewer
// than tailMargin × MinTailSamples samples beyond it.
func (r sampleRule) duration(rate float64) time.Duration {
	if r.metric == "" || r.window > 0 || rate <= 0 {
		return r.base
	}
	secs := tailMargin * histo.MinTailSamples / ((1 - r.p/100) * rate)
	d := time.Duration(math.Ceil(secs*10-1e-6)) * 100 * time.Millisecond // 1 − p is inexact: 11.000000001 s is 11 s
	return min(max(r.base, d), r.cap)
}

// floor is the lowest rate whose steps can be judged: the rate at which
// the longest step (or one window) has enough samples; 0 without a
// percentile clause.
func (r sampleRule) floor() float64 {
	if r.metric == "" {
		return 0
	}
	span := r.cap
	if r.window > 0 {
		span = r.window
	}
	return tailMargin * histo.MinTailSamples / ((1 - r.p/100) * span.Seconds())
}

// how words what the floor depends on: "with steps of 30s".
func (r sampleRule) how() string {
	if r.window > 0 {
		return fmt.Sprintf("in --slo-window windows of %s", r.window)
	}
	return fmt.Sprintf("with steps of %s", r.cap)
}

// short lists the percentile clauses of sr (judged on res) that res has
// too few samples for (histo.Insufficient): with --slo-window, counted
// per window, as res's samples spread over its windows.
func (r sampleRule) short(res *scheduler.Result, sr *report.SLOResult) []string {
	if sr == nil || res == nil {
		return nil
	}
	n := float64(0)
	if res.Response != nil {
		n = float64(res.Response.TotalCount())
	}
	if r.window > 0 && res.Window > r.window {
		n *= r.window.Seconds() / res.Window.Seconds()
	}
	var out []string
	for _, c := range sr.Clauses {
		if p, ok := percentileOf(c.Metric); ok && histo.Insufficient(int64(n), p) {
			out = append(out, c.Metric)
		}
	}
	return out
}
