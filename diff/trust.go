package diff

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// A side's own account of whether its numbers can be trusted: the trust
// rule's verdict of each of its tests and runs, and its client host's
// noise at each percentile.

// untrusted returns why the side's own verdict says its numbers cannot be
// trusted ("" when it does not): a verdict of generator_behind (pacer's
// lateness is material to them), inconclusive (the client's doing could
// explain an SLO's miss) or target_lost, on the test or on one of its
// runs (the first); lost is set when a run lost its target.
func (s *sample) untrusted() (why string, lost bool) {
	check := func(t *report.Test, where string) string {
		switch t.Verdict {
		case report.VerdictGeneratorBehind, report.VerdictInconclusive, report.VerdictTargetLost:
			why := safetext.OneLine(safetext.Escape(t.VerdictReason))
			if r := []rune(why); len(r) > 160 {
				why = string(r[:157]) + "…"
			}
			lost = lost || t.Verdict == report.VerdictTargetLost
			return fmt.Sprintf("verdict %s in %s (%s)", t.Verdict, where, why)
		}
		return ""
	}
	for i, r := range s.runs {
		if w := check(r, s.where[i]); why == "" {
			why = w
		}
	}
	for _, t := range s.tests {
		if w := check(t, "the test's runs pooled"); why == "" {
			why = w
		}
	}
	return why, lost
}

// hostNoise is a side's client-side histograms pooled over its runs: the
// host's hiccups and pacer's receive lag, beside its response time.
type hostNoise struct {
	response, hiccups, receive *hdrhistogram.Histogram
}

// noiseOf pools the side's histograms (an absent one stays nil).
func (s *sample) noiseOf() hostNoise { return noiseOfRuns(s.runs) }

// noiseOfRuns pools runs' response, hiccup and receive-lag histograms.
func noiseOfRuns(runs []*report.Test) hostNoise {
	var n hostNoise
	add := func(into **hdrhistogram.Histogram, enc *string) {
		if enc == nil || *enc == "" {
			return
		}
		h, err := histo.Decode(*enc)
		if err != nil {
			return
		}
		if *into == nil {
			*into = histo.New()
		}
		(*into).Merge(h)
	}
	for _, r := range runs {
		add(&n.response, &r.Histograms.Response)
		add(&n.hiccups, r.Histograms.Hiccup)
		add(&n.receive, r.Histograms.ReceiveLag)
	}
	return n
}

// noisyRounds counts the rounds of a paired comparison in which either
// side's client host noise at percentile q was a material share of its
// own figure there (hostNoise.at's test), of the rounds it could tell.
func noisyRounds(p pair, q float64) (noisy, measured int) {
	for i := range min(len(p.base.runs), len(p.cand.runs)) {
		loud, seen := false, false
		for _, r := range []*report.Test{p.base.runs[i], p.cand.runs[i]} {
			_, m, why := noiseOfRuns([]*report.Test{r}).at(q)
			seen = seen || m
			loud = loud || why != ""
		}
		if seen {
			measured++
		}
		if loud {
			noisy++
		}
	}
	return noisy, measured
}

// noiseAt is what the client host's noise at percentile q may have
// added to a side's figure there: the host hiccups and pacer's receive
// lag at q, summed as the trust rule sums them (report's attribution);
// measured is false when the side has neither. noisy says, when that
// noise is a material share of the side's own figure (verdict.QuietShare
// of it, the trust rule's test of a quiet host with the figure as the
// bound), what it was; "" on a quiet host. The host's busy CPUs alone do
// not count: what they did to pacer shows in its hiccups and receive lag,
// measured at q.
func (n hostNoise) at(q float64) (noiseMs float64, measured bool, noisy string) {
	if n.response == nil || n.response.TotalCount() == 0 {
		return 0, false, ""
	}
	v := histo.Millis(n.response.ValueAtQuantile(q))
	label := report.PercentileLabel(q)
	for _, c := range []struct {
		what string
		h    *hdrhistogram.Histogram
	}{{"host hiccups", n.hiccups}, {"pacer's receive lag", n.receive}} {
		if c.h == nil || c.h.TotalCount() == 0 {
			continue
		}
		measured = true
		x := histo.Millis(c.h.ValueAtQuantile(q))
		noiseMs += x
		if noisy == "" && v > 0 && x >= verdict.QuietShare*v {
			noisy = fmt.Sprintf("%s %s %.3f ms, %.0f%% of its %s (%.3f ms)", c.what, label, x, 100*x/v, label, v)
		}
	}
	return noiseMs, measured, noisy
}

// tooFew says why a side has too few samples beyond percentile q for it
// ("" when each run has enough): fewer than stats.MinTail beyond it in
// some run.
func (s *sample) tooFew(q float64) string {
	for i, r := range s.runs {
		resp, _, _ := r.LatencyHistograms()
		var n int64
		if resp != nil {
			n = resp.TotalCount()
		}
		if histo.Insufficient(n, q) {
			beyond := float64(n) * (1 - q/100)
			return fmt.Sprintf("%.1f samples beyond %s in %s (a percentile needs %d beyond it)",
				beyond, report.PercentileLabel(q), s.where[i], histo.MinTailSamples)
		}
	}
	return ""
}
