package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// SLO is a list of clauses a test's result must meet, such as
// "p99<5ms,p99.9<=20ms,errors<0.1%". A test that misses one is violated:
// exit code 3.
type SLO struct {
	Spec    string
	clauses []clause
}

type clause struct {
	text   string
	metric string // p50 … p99.99, min, mean, max, errors, unsent, rate
	op     string // <, <=, >, >=
	value  float64
	// unit is "ms" for latencies, "%" for shares, "req/s" for rate.
	unit string
}

// ParseSLO reads --slo.
func ParseSLO(spec string) (SLO, error) {
	s := SLO{Spec: spec}
	for _, text := range strings.Split(spec, ",") {
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		c, err := parseClause(text)
		if err != nil {
			return SLO{}, fmt.Errorf("--slo clause %q: %v", text, err)
		}
		s.clauses = append(s.clauses, c)
	}
	if len(s.clauses) == 0 {
		return SLO{}, fmt.Errorf("--slo %q has no clause (want e.g. p99<5ms,errors<0.1%%)", spec)
	}
	return s, nil
}

func parseClause(text string) (clause, error) {
	i := strings.IndexAny(text, "<>")
	if i <= 0 {
		return clause{}, fmt.Errorf("want METRIC<VALUE such as p99<5ms, errors<0.1%% or rate>=9500")
	}
	c := clause{text: text, metric: strings.ToLower(strings.TrimSpace(text[:i])), op: text[i : i+1]}
	rest := text[i+1:]
	if strings.HasPrefix(rest, "=") {
		c.op += "="
		rest = rest[1:]
	}
	rest = strings.TrimSpace(rest)
	_, latency := histo.Summary{}.Metric(c.metric)
	switch {
	case latency:
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return c, fmt.Errorf("%q is not a duration such as 5ms or 250us", rest)
		}
		c.value, c.unit = histo.Millis(int64(d)), "ms"
	case c.metric == "errors" || c.metric == "unsent":
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
	case c.metric == "rate":
		r, err := scheduler.ParseRate(rest)
		if err != nil {
			return c, err
		}
		c.value, c.unit = r.PerSecond(), "req/s"
	default:
		return c, fmt.Errorf("unknown metric %q (want min, mean, p50, p90, p95, p99, p99.9, p99.99, max, errors, unsent or rate)", c.metric)
	}
	return c, nil
}

// SLOResult is a test's verdict against an SLO.
type SLOResult struct {
	Spec       string   `json:"spec"`
	Pass       bool     `json:"pass"`
	Violations []string `json:"violations"`
	Checked    []string `json:"checked"`
	// Warnings are what the SLO did not ask about but the reader should
	// know: errors and timeouts when the SLO has no errors clause.
	Warnings []string `json:"warnings"`
}

// Check evaluates r: latencies are response times (the closed loop's
// latency from the send), errors the share of scheduled requests that
// ended in errors or timeouts, unsent the share never sent, rate the
// achieved rate. A latency clause over no samples fails: a bound on
// nothing is not met. Errors or timeouts that no errors clause judged are
// a warning.
func (s SLO) Check(r *scheduler.Result) *SLOResult {
	if len(s.clauses) == 0 {
		return nil
	}
	out := &SLOResult{Spec: s.Spec, Pass: true, Violations: []string{}, Checked: []string{}, Warnings: []string{}}
	sum := histo.Summarize(r.Response)
	share := func(n uint64) float64 {
		if r.Counts.Scheduled == 0 {
			return 0
		}
		return 100 * float64(n) / float64(r.Counts.Scheduled)
	}
	failed := r.Counts.Errors + r.Counts.Timeouts
	errorsJudged := false
	for _, c := range s.clauses {
		got, latency := sum.Metric(c.metric)
		switch {
		case latency && sum.Count == 0:
			out.Pass = false
			out.Violations = append(out.Violations, fmt.Sprintf("%s: no samples (wanted %s)", c.metric, c.text))
			continue
		case latency:
		case c.metric == "errors":
			got = share(failed)
			errorsJudged = true
		case c.metric == "unsent":
			got = share(r.Counts.Unsent)
		case c.metric == "rate":
			got = r.AchievedRate()
		}
		ok := false
		switch c.op {
		case "<":
			ok = got < c.value
		case "<=":
			ok = got <= c.value
		case ">":
			ok = got > c.value
		case ">=":
			ok = got >= c.value
		}
		line := fmt.Sprintf("%s %s %s %s", c.metric, formatValue(got, c.unit), c.op, formatValue(c.value, c.unit))
		if ok {
			out.Checked = append(out.Checked, line)
		} else {
			out.Pass = false
			out.Violations = append(out.Violations, fmt.Sprintf("%s %s %s %s (wanted %s)",
				c.metric, formatValue(got, c.unit), negate(c.op), formatValue(c.value, c.unit), c.text))
		}
	}
	if failed > 0 && !errorsJudged {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d of %d requests (%s) ended in errors or timeouts, and the SLO has no errors clause",
			failed, r.Counts.Scheduled, formatValue(share(failed), "%")))
	}
	return out
}

func negate(op string) string {
	return map[string]string{"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
}

func formatValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	case "%":
		return strconv.FormatFloat(v, 'f', 3, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " req/s"
}

// Lines are the verdict line and one line per warning, for human output.
func (r *SLOResult) Lines() []string {
	lines := []string{r.Line()}
	for _, w := range r.Warnings {
		lines = append(lines, "slo warning: "+w)
	}
	return lines
}

// Line is the one-line summary for human output (without the warnings;
// see Lines).
func (r *SLOResult) Line() string {
	if r.Pass {
		return "slo: pass (" + strings.Join(r.Checked, ", ") + ")"
	}
	return "slo: VIOLATED: " + strings.Join(r.Violations, "; ")
}
