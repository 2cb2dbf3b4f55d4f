package report

import (
	"fmt"
	"strconv"
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
	// LookOutcome is what the look that decided said (pass or fail),
	// which the test's own outcome, judged on everything including the
	// requests sent while that look judged, may not repeat.
	LookOutcome string `json:"look_outcome,omitempty"`
	// Retakes is how many times the look that decided was taken again,
	// at the ends of the intervals after it, because requests were still
	// open at it (its pass waited on their replies); absent when none.
	Retakes int `json:"retakes,omitempty"`
}

// decideJSON is a run's extension as the test's JSON holds it.
func decideJSON(e *scheduler.Extension, window time.Duration) *Decide {
	if e == nil {
		return nil
	}
	d := &Decide{BudgetS: e.Budget.Seconds(), PlannedS: e.Planned.Seconds(), EveryS: e.Every.Seconds(), MeasuredS: Round(window.Seconds(), 3),
		Looks: e.Looks, PlannedLooks: e.PlannedLooks, Level: Round(LookLevel(e), 6), Decided: e.Decided, By: lookRule(e),
		QuietWaitS: Round(e.QuietWait.Seconds(), 3), Quiet: e.Quiet, QuietHiccupsP99Ms: Round(histo.Millis(int64(e.QuietHiccups)), 3), WentOn: e.WentOn,
		LookOutcome: e.LookOutcome, Retakes: e.Retakes}
	return d
}

// extensionOf rebuilds a run's extension from the JSON.
func extensionOf(d *Decide) *scheduler.Extension {
	if d == nil {
		return nil
	}
	return &scheduler.Extension{Planned: exactSeconds(d.PlannedS), Budget: exactSeconds(d.BudgetS), Every: exactSeconds(d.EveryS),
		PlannedLooks: d.PlannedLooks, Looks: d.Looks, Decided: d.Decided, Final: d.By == "budget",
		QuietWait: exactSeconds(d.QuietWaitS), Quiet: d.Quiet, QuietHiccups: exactSeconds(d.QuietHiccupsP99Ms / 1e3), WentOn: d.WentOn,
		LookOutcome: d.LookOutcome, Retakes: d.Retakes}
}

// LookLevel is the confidence of a later look's intervals: 95% spent
// over the looks the budget held (stats.Bonferroni).
func LookLevel(e *scheduler.Extension) float64 {
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

// decideLine is the text report's line on how test t used its budget.
func decideLine(t *Test) string {
	d := t.Decide
	if d == nil {
		return ""
	}
	budget := strconv.FormatFloat(d.BudgetS, 'f', -1, 64) + " s"
	var s string
	switch d.By {
	case "first look":
		s = fmt.Sprintf("  decided        at the first look, after the planned %.1f s (budget %s)", d.MeasuredS, budget)
		if d.Retakes > 0 {
			s = fmt.Sprintf("  decided        at the first look, after the planned %.1f s and %s more for the replies still open at it (%.1f s measured; budget %s)",
				d.PlannedS, retakeTime(d), d.MeasuredS, budget)
		}
	case "budget":
		s = fmt.Sprintf("  undecided      until the budget's end: judged by the ordinary rule on all %.1f s measured (%d looks; budget %s)", d.MeasuredS, d.Looks, budget)
	default:
		s = fmt.Sprintf("  decided        at look %d of %d, after %.1f s measured (budget %s; looks after the first at %.2f%% confidence)",
			d.Looks, d.PlannedLooks, d.MeasuredS, budget, 100*d.Level)
		if d.Retakes > 0 {
			s += fmt.Sprintf(", taken again %s later for the replies still open at it", retakeTime(d))
		}
	}
	if d.QuietWaitS > 0 {
		q := "quiet"
		if !d.Quiet {
			q = "still busy"
		}
		s += fmt.Sprintf("; waited %.1f s for a quiet host (%s: hiccups p99 %.3f ms)", d.QuietWaitS, q, d.QuietHiccupsP99Ms)
	}
	switch {
	case d.WentOn == "":
	case d.By == "first look":
		s += "; at the planned end: " + safetext.Escape(d.WentOn)
	default:
		s += "; went on because the first look was inconclusive: " + safetext.Escape(d.WentOn)
	}
	if d.Decided && d.LookOutcome != "" && t.Outcome != "" && t.Outcome != d.LookOutcome {
		s += fmt.Sprintf("; the look said %s, but judged whole, with %s, the test is %s",
			safetext.Escape(d.LookOutcome), afterLook(t), safetext.Escape(t.Outcome))
	}
	return s + "\n"
}

// retakeTime is how long after its planned time the look that decided
// test d was taken again: what was measured past that time (the run ends
// a few milliseconds after the look), or the retakes' count.
func retakeTime(d *Decide) string {
	at := d.PlannedS + float64(max(d.Looks-1, 0))*d.EveryS
	if more := d.MeasuredS - at; more > 0 {
		return strconv.FormatFloat(Round(more, 1), 'f', -1, 64) + " s"
	}
	return fmt.Sprintf("%d intervals", d.Retakes)
}

// afterLook describes what a run that a look ended holds beyond the look's
// intervals: its last interval, the requests intended while the look
// judged and the last replies.
func afterLook(t *Test) string {
	if n := len(t.Intervals); n > 0 {
		last := t.Intervals[n-1]
		return fmt.Sprintf("the %d requests intended in the %.0f ms after it (while it judged) and the last replies", last.Scheduled, 1e3*last.DurationS)
	}
	return "the requests intended while it judged and the last replies"
}
