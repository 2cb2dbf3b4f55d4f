package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/report"
)

// The SLO clauses of a pubsub or stream test beyond its latencies:
//
//	loss<=0        lost deliveries, a share of those expected (loss<=0.1%)
//	lag<=1000      a stream's consumer lag, in entries: the most entries
//	               added and not yet delivered at any interval's end, and
//	               a lag that rises through the run (unsustainable) fails
//	               whatever its size
//
// Both are judged on the whole test, also with --slo-window (a loss and
// a backlog belong to the run, not to a window), and a failure of either
// is the server's (with its consumers' own processing time, for a
// stream): the generator's lateness loses nothing and delays no consumer.

// messageMetric reports whether metric is a clause of message tests only.
func messageMetric(metric string) bool { return metric == "loss" || metric == "lag" }

// parseMessageClause reads the value of a loss or lag clause.
func parseMessageClause(c clause, rest string) (clause, error) {
	if c.metric == "lag" {
		n, err := strconv.ParseUint(rest, 10, 63)
		if err != nil {
			return c, fmt.Errorf("%q is not a count of entries such as 1000", rest)
		}
		c.value, c.unit = float64(n), "entries"
		return c, nil
	}
	return parseShare(c, rest)
}

// parseShare reads a share (errors, timeouts, unsent, loss): a
// percentage (0.1%) or a fraction (0.001).
func parseShare(c clause, rest string) (clause, error) {
	pct := strings.HasSuffix(rest, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(rest, "%"), 64)
	// NaN compares false with everything: without the explicit test
	// "errors<NaN%" would be accepted and then never met.
	if err != nil || math.IsNaN(v) || v < 0 || (pct && v > 100) || (!pct && v > 1) {
		return c, fmt.Errorf("%q is not a share such as 0.1%% or 0.001", rest)
	}
	if !pct {
		v *= 100
	}
	c.value, c.unit = v, "%"
	return c, nil
}

// evaluateMessages checks a loss or lag clause on the whole test.
func evaluateMessages(c clause, t *report.Test, window bool) report.ClauseResult {
	cr := report.ClauseResult{Clause: c.text, Metric: c.metric, Op: c.op, Bound: c.value, Unit: c.unit, Basis: "delivery", Figures: &report.ClauseFigures{}}
	m := t.Messages
	var v float64
	ok := false
	switch {
	case m == nil:
	case c.metric == "loss" && m.Expected > 0:
		v, ok = 100*float64(m.Lost)/float64(m.Expected), true
	case c.metric == "lag" && m.Stream != nil && m.Stream.Lag != nil:
		v, ok = float64(m.Stream.Lag.MaxEntries), true
	}
	if !ok {
		return cr
	}
	v = report.Round(v, 6)
	cr.Observed = &v
	cr.Pass = c.met(v)
	if c.metric == "lag" && m.Stream.Lag.Rising && c.upper() {
		cr.Pass = false
	}
	if window {
		cr.Window = nil // judged on the whole test
	}
	return cr
}

// messageClauseLine words a loss or lag clause, with why a lag that met
// its bound still failed.
func messageClauseLine(cr report.ClauseResult, t *report.Test) string {
	line := cr.Line()
	if cr.Metric != "lag" || cr.Observed == nil || t.Messages == nil || t.Messages.Stream == nil || t.Messages.Stream.Lag == nil {
		return line
	}
	l := t.Messages.Stream.Lag
	if l.Rising && clauseOf(cr).upper() {
		if clauseOf(cr).met(*cr.Observed) {
			line = fmt.Sprintf("lag %s %s %s, but rising (wanted %s)", report.FormatValue(*cr.Observed, "entries"), cr.Op, report.FormatValue(cr.Bound, "entries"), cr.Clause)
		}
		line += fmt.Sprintf(": unsustainable, the lag rose through the run (Mann–Kendall S = %d over %d intervals, p = %.2g; %+.0f entries/s)", l.S, l.Intervals, l.P, l.GrowthPerS)
	}
	return line
}
