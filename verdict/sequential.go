package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/stats"
)

// sequential applies --decide-within's rule to j, the ordinary rule's
// judgement of a test measured for a budget: at the first look (the
// planned duration) and once the budget is spent it is j itself; at the
// looks between, on everything measured so far, with intervals from the
// block bootstrap over the test's intervals (stats.Series) at the level
// the budget's looks leave each (report.LookLevel):
//
//   - pass when every latency percentile clause's response interval lies
//     within its bound, every other clause passes and the load was
//     delivered;
//   - the server's failure when a clause the ordinary rule gives the
//     server (its evidence: service time, the server process, its
//     latency events) fails beyond doubt: a percentile clause's service
//     interval lies beyond its bound, or a clause that is no percentile;
//   - otherwise inconclusive: the run goes on.
//
// A look never passes or fails on a point estimate, so looking again
// while the answer does not suit spends the error budget and no more; a
// target lost is lost at any look.
func sequential(t *report.Test, j Judgement) Judgement {
	f := t.MustFacts()
	e := f.Extension
	if e == nil || e.Looks <= 1 || e.Final || j.Outcome == Error || t.SLO == nil {
		return j
	}
	level := report.LookLevel(e)
	where := fmt.Sprintf("look %d of %d (%.1f s measured; %.1f%% intervals, block bootstrap over the intervals)", e.Looks, e.PlannedLooks, f.Window.Seconds(), 100*level)
	ivs, err := t.Series()
	if err != nil || len(ivs) < stats.MinIntervals {
		return Judgement{Outcome: Inconclusive, Verdict: report.VerdictInconclusive, Reason: "undecided at " + where + ": too few intervals", Owners: j.Owners}
	}
	resp, serv, err := seriesOf(ivs, e.Hists)
	if err != nil {
		return Judgement{Outcome: Inconclusive, Verdict: report.VerdictInconclusive, Reason: "undecided at " + where + ": " + err.Error(), Owners: j.Owners}
	}
	h := Assess(t)
	pass := !h.UnderDelivered
	var passWhy, failWhy, openWhy []string
	for i, c := range t.SLO.Clauses {
		q, isPct := percentileOfMetric(c.Metric)
		owner := ""
		if i < len(j.Owners) {
			owner = j.Owners[i]
		}
		cl := clauseOf(c)
		if !cl.latency() || !cl.upper() || !isPct {
			if !c.Pass {
				pass = false
				if owner == OwnerServer {
					failWhy = append(failWhy, c.Clause+": "+c.Line())
				}
			}
			continue
		}
		ri, rerr := resp.PercentileIntervals([]float64{q}, level, 1)
		si, serr := serv.PercentileIntervals([]float64{q}, level, 2)
		if rerr != nil || serr != nil {
			pass = false
			openWhy = append(openWhy, c.Clause+": too few intervals")
			continue
		}
		r, s := ri[0], si[0]
		switch {
		case cl.met(msOf(r.Hi)):
			passWhy = append(passWhy, fmt.Sprintf("%s: response %s %s within %s", c.Clause, c.Metric, ivText(r.Interval), report.FormatValue(c.Bound, "ms")))
		case !cl.met(msOf(s.Lo)) && owner == OwnerServer:
			pass = false
			failWhy = append(failWhy, fmt.Sprintf("%s: service %s %s beyond %s", c.Clause, c.Metric, ivText(s.Interval), report.FormatValue(c.Bound, "ms")))
		default:
			pass = false
			openWhy = append(openWhy, fmt.Sprintf("%s: response %s %s holds %s", c.Clause, c.Metric, ivText(r.Interval), report.FormatValue(c.Bound, "ms")))
		}
	}
	switch {
	case len(failWhy) > 0:
		reason := "decided at " + where + ": the server missed " + andMore(failWhy)
		if j.Outcome == Fail {
			reason += "; " + j.Reason
		}
		return Judgement{Outcome: Fail, Verdict: report.VerdictOK, Reason: reason, Owners: j.Owners}
	case pass:
		return Judgement{Outcome: Pass, Verdict: report.VerdictOK, Reason: "decided at " + where + ": " + strings.Join(passWhy, "; "), Owners: nil}
	}
	why := openWhy
	if len(why) == 0 {
		why = []string{j.Reason}
	}
	return Judgement{Outcome: Inconclusive, Verdict: report.VerdictInconclusive, Reason: "undecided at " + where + ": " + strings.Join(why, "; ") + "; " + j.Reason, Owners: j.Owners}
}

// seriesOf makes the response and service times of intervals into the
// block bootstrap's series.
func seriesOf(ivs []scheduler.Interval, memo *stats.HistMemo) (resp, serv *stats.Series, err error) {
	hist := func(p histo.Packed) (stats.Hist, error) {
		if p.Empty() {
			return stats.Hist{}, nil
		}
		return memo.Get(p.Key(), func() (stats.Hist, error) {
			h, err := p.Histogram()
			if err != nil {
				return stats.Hist{}, err
			}
			return stats.HistOf(h), nil
		})
	}
	rs := make([]stats.Hist, len(ivs))
	ss := make([]stats.Hist, len(ivs))
	for i, iv := range ivs {
		if rs[i], err = hist(iv.Response); err != nil {
			return nil, nil, err
		}
		if ss[i], err = hist(iv.Service); err != nil {
			return nil, nil, err
		}
	}
	return stats.NewSeries(rs), stats.NewSeries(ss), nil
}

// percentileOfMetric reads p99 as 99; false for the other metrics.
func percentileOfMetric(m string) (float64, bool) {
	if !strings.HasPrefix(m, "p") {
		return 0, false
	}
	q, err := strconv.ParseFloat(m[1:], 64)
	return q, err == nil && q > 0 && q < 100
}

// msOf is a bootstrap end (nanoseconds; +Inf unbounded) in ms.
func msOf(v float64) float64 {
	if math.IsInf(v, 0) {
		return v
	}
	return v / 1e6
}

// ivText words an interval in ms: "1.204 [1.101, 1.390] ms".
func ivText(iv stats.Interval) string {
	end := func(v float64) string {
		if math.IsInf(v, 0) {
			return "…"
		}
		return strconv.FormatFloat(v/1e6, 'f', 3, 64)
	}
	return fmt.Sprintf("%s [%s, %s] ms", end(iv.Estimate), end(iv.Lo), end(iv.Hi))
}
