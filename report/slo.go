package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// A test's result against an SLO (tests[].slo), as the verdict package's
// SLO.Check makes it and the text prints it.

// SLOResult is a test's verdict against an SLO. Clauses hold the numbers
// (for scripts); Violations, Checked and Warnings the same in words.
type SLOResult struct {
	Spec string `json:"spec"`
	Pass bool   `json:"pass"`
	// WindowS is --slo-window in seconds (absent without it).
	WindowS    float64        `json:"window_s,omitempty"`
	Clauses    []ClauseResult `json:"clauses"`
	Violations []string       `json:"violations"`
	Checked    []string       `json:"checked"`
	// Warnings are what the SLO did not ask about but the reader should
	// know: errors and timeouts when the SLO has no errors clause.
	Warnings []string `json:"warnings"`
}

// ClauseResult is one clause, evaluated: on the whole test, or with
// --slo-window on every window, Observed then being the worst window's.
type ClauseResult struct {
	// Clause is the clause as written; Metric, Op and Bound its parts
	// (Bound in Unit: "ms", "%" or "req/s").
	Clause string  `json:"clause"`
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Bound  float64 `json:"bound"`
	// Observed is the value measured (the worst window's); null when a
	// latency had no samples.
	Observed *float64 `json:"observed"`
	Unit     string   `json:"unit"`
	Pass     bool     `json:"pass"`
	// Basis is what latencies were measured on: "response" (open loop,
	// from the intended time), "service" (closed loop, from the send) or
	// "delivery" (a pubsub or stream test: its messages' deliveries).
	Basis string `json:"basis"`
	// Window is, with --slo-window, the worst window and how many failed;
	// null without.
	Window *ClauseWindow `json:"window"`

	// Client is, for a latency clause, how much of its bound the client's
	// parts took at the clause's metric (see ClientShare); null for other
	// clauses. Owner says whose a failing clause is: "server" (its side
	// fails too, on a quiet host), "client" (the client's send or receive
	// lag explains it), "host" (the client machine was too busy to tell)
	// or "capacity" (the server's process waited for a CPU, or the client
	// host's noise could account for the miss, while the test had the host
	// to itself and kept it busy); empty for a clause that passed.
	Client *ClientShare `json:"client,omitempty"`
	Owner  string       `json:"owner,omitempty"`

	// Figures are what the trust rule reads (verdict.Judge), over the
	// same scope as Observed; nil for a clause read back from JSON.
	Figures *ClauseFigures `json:"-"`
}

// ClauseFigures are a clause's exact facts beyond its JSON fields, over
// the clause's scope (the whole test or the worst window): ServiceFails,
// the clause also fails on service time (in some window); ServiceMs the
// service time at the clause's metric; LagP99Ms the send-lag p99;
// Scheduled and Duration the scope's scheduled requests and length.
type ClauseFigures struct {
	ServiceFails        bool
	ServiceMs, LagP99Ms float64
	Scheduled           uint64
	Duration            time.Duration
}

// ClientShare is what the client's parts amounted to at a latency
// clause's metric (its p99 for p99<=2ms), in ms and as a share of the
// clause's bound: the send lag (inside response time), the receive lag
// (pacer's delay in reading replies, outside it where kernel timestamps
// are read) and the host's hiccups (the client machine's own noise).
// Shares are 0..∞ (0.4: 40% of the bound); a part not measured is
// absent.
type ClientShare struct {
	SendLagMs        *float64 `json:"send_lag_ms,omitempty"`
	SendLagShare     *float64 `json:"send_lag_share,omitempty"`
	ReceiveLagMs     *float64 `json:"receive_lag_ms,omitempty"`
	ReceiveLagShare  *float64 `json:"receive_lag_share,omitempty"`
	HostHiccupsMs    *float64 `json:"host_hiccups_ms,omitempty"`
	HostHiccupsShare *float64 `json:"host_hiccups_share,omitempty"`
}

// ClauseWindow locates the worst window of a clause evaluated per window.
type ClauseWindow struct {
	// LengthS is --slo-window; StartS and DurationS the worst window's
	// start (from the test's start) and length, in seconds.
	LengthS   float64 `json:"length_s"`
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	// Windows evaluated, and how many of them failed the clause.
	Windows int `json:"windows"`
	Failed  int `json:"failed"`
}

// Line words a clause's result: "p99 1.204 ms < 2.000 ms" when met,
// "p99 7.204 ms >= 2.000 ms (wanted p99<2ms)" when not, with the worst
// window's place when evaluated per window.
func (cr ClauseResult) Line() string {
	got := "no samples"
	if cr.Observed != nil {
		got = FormatValue(*cr.Observed, cr.Unit)
	}
	var s string
	switch {
	case cr.Observed == nil:
		s = fmt.Sprintf("%s: no samples (wanted %s)", cr.Metric, cr.Clause)
	case cr.Pass:
		s = fmt.Sprintf("%s %s %s %s", cr.Metric, got, cr.Op, FormatValue(cr.Bound, cr.Unit))
	default:
		s = fmt.Sprintf("%s %s %s %s (wanted %s)", cr.Metric, got, negate(cr.Op), FormatValue(cr.Bound, cr.Unit), cr.Clause)
	}
	if w := cr.Window; w != nil {
		what := "worst"
		if !cr.Pass {
			what = fmt.Sprintf("in %d of %d windows, worst", w.Failed, w.Windows)
		}
		s += fmt.Sprintf(" [%s at %s]", what, strconv.FormatFloat(w.StartS, 'f', -1, 64)+" s")
	}
	return s
}

func negate(op string) string {
	return map[string]string{"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
}

// FormatValue words a value in its unit: "1.204 ms", "0.100%",
// "9500.0 req/s".
func FormatValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	case "%":
		return strconv.FormatFloat(v, 'f', 3, 64) + "%"
	case "entries":
		return strconv.FormatFloat(v, 'f', 0, 64) + " entries"
	case "s":
		return strconv.FormatFloat(v, 'f', 3, 64) + " s"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " req/s"
}

// Lines are the verdict line, one line per warning and a line on how much
// of each latency bound the client's parts took, for human output.
func (r *SLOResult) Lines() []string {
	lines := []string{r.Line()}
	for _, w := range r.Warnings {
		lines = append(lines, "slo warning: "+w)
	}
	if s := r.clientLine(); s != "" {
		lines = append(lines, s)
	}
	// A result read back may say anything: no terminal escape gets out.
	escapeAll(lines)
	return lines
}

// Line is the one-line summary for human output (without the warnings;
// see Lines).
func (r *SLOResult) Line() string {
	per := ""
	if r.WindowS > 0 {
		per = " in every " + strconv.FormatFloat(r.WindowS, 'f', -1, 64) + " s window"
	}
	if r.Pass {
		return "slo: pass" + per + " (" + strings.Join(r.Checked, ", ") + ")"
	}
	return "slo: VIOLATED: " + strings.Join(r.Violations, "; ")
}

// MetOnService reports whether the SLO, failed on response time, holds on
// service time: every failing clause bounds a latency that service time
// meets (in every window). Response time = send lag + service time, so
// the failure is then the send lag's, not the server's. False for a
// result that passed, or one read back from JSON.
func (r *SLOResult) MetOnService() bool {
	if r == nil || r.Pass {
		return false
	}
	for _, c := range r.Clauses {
		if c.Pass {
			continue
		}
		if c.Figures == nil || !latencyMetric(c.Metric) || c.Figures.ServiceFails || c.Basis != "response" && c.Basis != "delivery" {
			return false
		}
	}
	return true
}

// latencyMetric reports whether metric is a latency (p50 … p99.99, min,
// mean, max).
func latencyMetric(metric string) bool {
	_, ok := histo.Summary{}.Metric(metric)
	return ok
}

// clientLine says, for each latency clause, how much of its bound the
// client's parts took: "slo client share: p99<=2ms: send lag 0.150 ms
// (8%), receive lag 0.020 ms (1%), host hiccups 1.280 ms (64%)"; "" when
// no clause has any.
func (r *SLOResult) clientLine() string {
	var clauses []string
	for _, c := range r.Clauses {
		p := c.Client
		if p == nil {
			continue
		}
		var parts []string
		add := func(name string, ms, share *float64) {
			if ms == nil {
				return
			}
			s := name + " " + FormatValue(*ms, "ms")
			if share != nil {
				s += fmt.Sprintf(" (%.0f%%)", 100**share)
			}
			parts = append(parts, s)
		}
		add("send lag", p.SendLagMs, p.SendLagShare)
		add("receive lag", p.ReceiveLagMs, p.ReceiveLagShare)
		add("host hiccups", p.HostHiccupsMs, p.HostHiccupsShare)
		if len(parts) > 0 {
			clauses = append(clauses, c.Clause+": "+strings.Join(parts, ", "))
		}
	}
	if len(clauses) == 0 {
		return ""
	}
	return "slo client share (of each bound, at its metric): " + strings.Join(clauses, "; ")
}

// FormatMs prints a latency in ms to three significant digits, without an
// exponent: 0.0612, 0.612, 6.12, 61.2, 612.
func FormatMs(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(v)))
	return strconv.FormatFloat(v, 'f', max(0, digits), 64)
}
