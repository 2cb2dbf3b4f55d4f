package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/stats"
)

// Decide is how a test given a budget to reach a verdict in
// (--decide-within) used it (tests[].decide): how long it waited for a
// quiet host, how long it measured, how many looks it took of the ones
// the budget held, the confidence each later look judged at, and why it
// went on past its planned duration.
type Decide struct {
	BudgetS   float64 `json:"budget_s"`
	PlannedS  float64 `json:"planned_s"`
	EveryS    float64 `json:"every_s"`
	MeasuredS float64 `json:"measured_s"`
	// Looks taken of PlannedLooks; Level is each later look's two-sided
	// confidence (stats.Bonferroni of 95% over PlannedLooks).
	Looks        int     `json:"looks"`
	PlannedLooks int     `json:"planned_looks"`
	Level        float64 `json:"level"`
	// Decided: a look ended the run before the budget did. By says which
	// rule gave the verdict: "first look" (the ordinary rule on the
	// planned duration), "sequential" (a later look's intervals) or
	// "budget" (the ordinary rule on everything, when the budget ran
	// out).
	Decided bool   `json:"decided"`
	By      string `json:"by"`
	// QuietWaitS is how long the test waited for a quiet host before it
	// started; Quiet whether it found one, QuietHiccupsP99Ms the hiccup
	// p99 it last measured.
	QuietWaitS        float64 `json:"quiet_wait_s"`
	Quiet             bool    `json:"quiet"`
	QuietHiccupsP99Ms float64 `json:"quiet_hiccups_p99_ms"`
	// WentOn is why it went on past its planned duration (the first
	// look's inconclusive reason); empty when it did not.
	WentOn string `json:"went_on,omitempty"`
}

// decideJSON is a run's extension as the test's JSON holds it.
func decideJSON(e *scheduler.Extension, window time.Duration) *Decide {
	if e == nil {
		return nil
	}
	d := &Decide{BudgetS: e.Budget.Seconds(), PlannedS: e.Planned.Seconds(), EveryS: e.Every.Seconds(), MeasuredS: round(window.Seconds(), 3),
		Looks: e.Looks, PlannedLooks: e.PlannedLooks, Level: round(lookLevel(e), 6), Decided: e.Decided, By: lookRule(e),
		QuietWaitS: round(e.QuietWait.Seconds(), 3), Quiet: e.Quiet, QuietHiccupsP99Ms: round(histo.Millis(int64(e.QuietHiccups)), 3), WentOn: e.WentOn}
	return d
}

// extensionOf rebuilds a run's extension from the JSON.
func extensionOf(d *Decide) *scheduler.Extension {
	if d == nil {
		return nil
	}
	return &scheduler.Extension{Planned: exactSeconds(d.PlannedS), Budget: exactSeconds(d.BudgetS), Every: exactSeconds(d.EveryS),
		PlannedLooks: d.PlannedLooks, Looks: d.Looks, Decided: d.Decided, Final: d.By == "budget",
		QuietWait: exactSeconds(d.QuietWaitS), Quiet: d.Quiet, QuietHiccups: exactSeconds(d.QuietHiccupsP99Ms / 1e3), WentOn: d.WentOn}
}

// lookLevel is the confidence of a later look's intervals: 95% spent
// over the looks the budget held (stats.Bonferroni).
func lookLevel(e *scheduler.Extension) float64 {
	return stats.Bonferroni(stats.Level, max(e.PlannedLooks, 1))
}

// lookRule names the rule a look applies: the ordinary one at the first
// look (the planned duration) and when the budget ran out, the
// sequential one between.
func lookRule(e *scheduler.Extension) string {
	switch {
	case e.Looks <= 1:
		return "first look"
	case e.Final:
		return "budget"
	}
	return "sequential"
}

// sequential applies --decide-within's rule to j, the ordinary rule's
// judgement of a test measured for a budget: at the first look (the
// planned duration) and once the budget is spent it is j itself; at the
// looks between, on everything measured so far, with intervals from the
// block bootstrap over the test's intervals (stats.Series) at the level
// the budget's looks leave each (lookLevel):
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
func sequential(t *Test, j Judgement) Judgement {
	f := t.mustFigures()
	e := f.extension
	if e == nil || e.Looks <= 1 || e.Final || j.Outcome == Failed || t.SLO == nil {
		return j
	}
	level := lookLevel(e)
	where := fmt.Sprintf("look %d of %d (%.1f s measured; %.1f%% intervals, block bootstrap over the intervals)", e.Looks, e.PlannedLooks, f.window.Seconds(), 100*level)
	ivs, err := t.series()
	if err != nil || len(ivs) < stats.MinIntervals {
		return Judgement{Outcome: Untrusted, Verdict: VerdictInconclusive, Reason: "undecided at " + where + ": too few intervals", Owners: j.Owners}
	}
	resp, serv, err := seriesOf(ivs)
	if err != nil {
		return Judgement{Outcome: Untrusted, Verdict: VerdictInconclusive, Reason: "undecided at " + where + ": " + err.Error(), Owners: j.Owners}
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
		if !c.c.latency() || !c.c.upper() || !isPct {
			if !c.Pass {
				pass = false
				if owner == OwnerServer {
					failWhy = append(failWhy, c.Clause+": "+clauseLine(c))
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
		case c.c.met(msOf(r.Hi)):
			passWhy = append(passWhy, fmt.Sprintf("%s: response %s %s within %s", c.Clause, c.Metric, ivText(r.Interval), formatValue(c.Bound, "ms")))
		case !c.c.met(msOf(s.Lo)) && owner == OwnerServer:
			pass = false
			failWhy = append(failWhy, fmt.Sprintf("%s: service %s %s beyond %s", c.Clause, c.Metric, ivText(s.Interval), formatValue(c.Bound, "ms")))
		default:
			pass = false
			openWhy = append(openWhy, fmt.Sprintf("%s: response %s %s holds %s", c.Clause, c.Metric, ivText(r.Interval), formatValue(c.Bound, "ms")))
		}
	}
	switch {
	case len(failWhy) > 0:
		reason := "decided at " + where + ": the server missed " + andMore(failWhy)
		if j.Outcome == Violated {
			reason += "; " + j.Reason
		}
		return Judgement{Outcome: Violated, Verdict: VerdictOK, Reason: reason, Owners: j.Owners}
	case pass:
		return Judgement{Outcome: Trusted, Verdict: VerdictOK, Reason: "decided at " + where + ": " + strings.Join(passWhy, "; "), Owners: nil}
	}
	why := openWhy
	if len(why) == 0 {
		why = []string{j.Reason}
	}
	return Judgement{Outcome: Untrusted, Verdict: VerdictInconclusive, Reason: "undecided at " + where + ": " + strings.Join(why, "; ") + "; " + j.Reason, Owners: j.Owners}
}

// seriesOf makes the response and service times of intervals into the
// block bootstrap's series.
func seriesOf(ivs []scheduler.Interval) (resp, serv *stats.Series, err error) {
	rs := make([]stats.Hist, len(ivs))
	ss := make([]stats.Hist, len(ivs))
	for i, iv := range ivs {
		if !iv.Response.Empty() {
			h, err := iv.Response.Histogram()
			if err != nil {
				return nil, nil, err
			}
			rs[i] = stats.HistOf(h)
		}
		if !iv.Service.Empty() {
			h, err := iv.Service.Histogram()
			if err != nil {
				return nil, nil, err
			}
			ss[i] = stats.HistOf(h)
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

// decideLine is the text report's line on how a test used its budget.
func decideLine(d *Decide) string {
	if d == nil {
		return ""
	}
	budget := strconv.FormatFloat(d.BudgetS, 'f', -1, 64) + " s"
	var s string
	switch d.By {
	case "first look":
		s = fmt.Sprintf("  decided        at the first look, after the planned %.1f s (budget %s)", d.MeasuredS, budget)
	case "budget":
		s = fmt.Sprintf("  undecided      until the budget's end: judged by the ordinary rule on all %.1f s measured (%d looks; budget %s)", d.MeasuredS, d.Looks, budget)
	default:
		s = fmt.Sprintf("  decided        at look %d of %d, after %.1f s measured (budget %s; looks after the first at %.2f%% confidence)",
			d.Looks, d.PlannedLooks, d.MeasuredS, budget, 100*d.Level)
	}
	if d.QuietWaitS > 0 {
		q := "quiet"
		if !d.Quiet {
			q = "still busy"
		}
		s += fmt.Sprintf("; waited %.1f s for a quiet host (%s: hiccups p99 %.3f ms)", d.QuietWaitS, q, d.QuietHiccupsP99Ms)
	}
	if d.WentOn != "" {
		s += "; went on because the first look was inconclusive: " + safetext.Escape(d.WentOn)
	}
	return s + "\n"
}
