package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// SLO is a list of clauses a test's result must meet, such as
// "p99<5ms,p99.9<=20ms,errors<0.1%". A test that misses one is violated
// (exit code 3, unless the trust rule says the generator could explain it:
// see Judge). With Window set, every window of that length must meet every
// clause.
type SLO struct {
	Spec string
	// Window, when set, evaluates the clauses on each window of the test's
	// interval series (consecutive intervals merged into windows of this
	// length, a multiple of the interval) instead of on the whole test.
	Window  time.Duration
	clauses []clause
}

type clause struct {
	text   string
	metric string // p50 … p99.99, min, mean, max, errors, timeouts, unsent, rate, achieved, unavailable
	op     string // <, <=, >, >=
	value  float64
	// unit is "ms" for latencies, "%" for shares, "req/s" for rate, "s"
	// for unavailable.
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
			return SLO{}, usage.Option("slo", "{slo} clause %q: %v", text, err)
		}
		s.clauses = append(s.clauses, c)
	}
	if len(s.clauses) == 0 {
		return SLO{}, usage.Option("slo", "{slo} %q has no clause (want e.g. p99<5ms,errors<0.1%%)", spec)
	}
	return s, nil
}

// IsZero reports whether s has no clause (no --slo).
func (s SLO) IsZero() bool { return len(s.clauses) == 0 }

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
	switch {
	case c.latency():
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return c, fmt.Errorf("%q is not a duration such as 5ms or 250us", rest)
		}
		c.value, c.unit = histo.Millis(int64(d)), "ms"
	case c.metric == "errors" || c.metric == "timeouts" || c.metric == "unsent":
		return parseShare(c, rest)
	case c.metric == "unavailable":
		// Per event: the longest window of any topology event, writes or
		// reads, in seconds.
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return c, fmt.Errorf("%q is not a duration such as 2s or 500ms", rest)
		}
		c.value, c.unit = d.Seconds(), "s"
	case c.metric == "rate" || c.metric == "achieved":
		r, err := timeline.ParseRate(rest)
		if err != nil {
			return c, err
		}
		c.value, c.unit = r.PerSecond(), "req/s"
	case messageMetric(c.metric):
		return parseMessageClause(c, rest)
	default:
		return c, fmt.Errorf("unknown metric %q (want min, mean, p50, p90, p95, p99, p99.9, p99.99, max, errors, timeouts, unsent, rate, achieved or unavailable; pubsub and stream also loss, stream lag)", c.metric)
	}
	return c, nil
}

func (c clause) latency() bool {
	_, ok := histo.Summary{}.Metric(c.metric)
	return ok
}

// met reports whether v meets the clause's bound.
func (c clause) met(v float64) bool {
	switch c.op {
	case "<":
		return v < c.value
	case "<=":
		return v <= c.value
	case ">":
		return v > c.value
	}
	return v >= c.value
}

// TightestLatency is the smallest upper bound the SLO puts on a latency
// (p50 … p99.99, mean, max, min with < or <=); 0 when it has none. The
// send-lag budget of an open run follows it (see cmd/pacer's sloLagLimit).
func (s SLO) TightestLatency() time.Duration {
	tightest, _ := s.latencyBounds()
	return tightest
}

// LoosestLatency is the largest upper bound the SLO puts on a latency; 0
// when it has none. A sweep's step is aborted at 10 times it.
func (s SLO) LoosestLatency() time.Duration {
	_, loosest := s.latencyBounds()
	return loosest
}

func (s SLO) latencyBounds() (tightest, loosest time.Duration) {
	for _, c := range s.clauses {
		if !c.latency() || !c.upper() {
			continue
		}
		if d := time.Duration(c.value * float64(time.Millisecond)); d > 0 {
			if tightest == 0 || d < tightest {
				tightest = d
			}
			loosest = max(loosest, d)
		}
	}
	return tightest, loosest
}

// Metrics returns the metric of each clause, in order (p99<=1ms, errors<1%
// → p99, errors).
func (s SLO) Metrics() []string {
	out := make([]string, len(s.clauses))
	for i, c := range s.clauses {
		out[i] = c.metric
	}
	return out
}

// upper reports whether the clause bounds its metric from above (<, <=):
// a larger value is worse.
func (c clause) upper() bool { return c.op[0] == '<' }

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
	// lag explains it) or "host" (the client machine was too busy to
	// tell); empty for a clause that passed.
	Client *ClientShare `json:"client,omitempty"`
	Owner  string       `json:"owner,omitempty"`

	// What the trust rule reads (see Judge), over the same scope as
	// Observed (the whole test or the worst window):
	// serviceFails: the clause also fails on service time (in some
	// window); service the service time at the clause's metric (ms);
	// lagP99 the send-lag p99 in ms; scheduled and dur the scope's
	// scheduled requests and length.
	serviceFails bool
	service      float64
	lagP99       float64
	scheduled    uint64
	dur          time.Duration
	c            clause
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

// scope is what a clause is evaluated on: the whole test or one window.
type scope struct {
	start, dur      time.Duration
	counts          scheduler.Counts
	resp, serv, lag histo.Summary
	// recv and hiccup are the receive lag and the host's hiccups (Count
	// 0: not measured).
	recv, hiccup histo.Summary
	// rate is completed requests per second of the scope; unavailable
	// the longest window of its topology events, in seconds.
	rate, unavailable float64
}

// observe returns the clause's metric over sc; ok is false for a latency
// without samples.
func (c clause) observe(sc scope, basis histo.Summary) (float64, bool) {
	share := func(n uint64) float64 {
		if sc.counts.Scheduled == 0 {
			return 0
		}
		return 100 * float64(n) / float64(sc.counts.Scheduled)
	}
	switch c.metric {
	case "errors":
		return share(sc.counts.Errors + sc.counts.Timeouts), true
	case "timeouts":
		return share(sc.counts.Timeouts), true
	case "unsent":
		return share(sc.counts.Unsent), true
	case "rate", "achieved":
		return sc.rate, true
	case "unavailable":
		return sc.unavailable, true
	}
	v, _ := basis.Metric(c.metric)
	return v, basis.Count > 0
}

// Check evaluates r: latencies on response time (open loop) or the
// latency from the send (closed loop: "service"), errors the share of
// scheduled requests that ended in errors or timeouts, timeouts and unsent
// their shares, rate (or achieved) the completed requests per second. A
// latency clause over no samples fails: a bound on nothing is not met.
// Errors that no errors clause judged, or timeouts that no errors or
// timeouts clause judged, are a warning. With s.Window, every window of the interval series is
// evaluated and each clause reports its worst window. Check is pure; it
// fails only on an interval series it cannot read or cut.
func (s SLO) Check(t *Test) (*SLOResult, error) {
	if len(s.clauses) == 0 || t == nil {
		return nil, nil
	}
	f, err := t.figures()
	if err != nil {
		return nil, err
	}
	out := &SLOResult{Spec: s.Spec, Pass: true, Clauses: []ClauseResult{}, Violations: []string{}, Checked: []string{}, Warnings: []string{}}
	basis := "response"
	switch {
	case t.Messages != nil:
		basis = "delivery" // the test's response times are its deliveries'
	case t.Mode == "closed":
		basis = "service"
	}
	var scopes []scope
	if s.Window > 0 {
		if scopes, err = windows(t, s.Window); err != nil {
			return nil, err
		}
		out.WindowS = round(s.Window.Seconds(), 6)
	} else {
		scopes = []scope{{dur: f.window, counts: t.Counts, rate: t.achieved(), unavailable: worstUnavailable(t.Events),
			resp: histo.Summarize(f.response), serv: histo.Summarize(f.service), lag: histo.Summarize(f.lag),
			recv: histo.Summarize(f.receive), hiccup: histo.Summarize(f.hiccups)}}
	}
	r := t
	errorsJudged, timeoutsJudged := false, false
	for _, c := range s.clauses {
		var cr ClauseResult
		line := ""
		if messageMetric(c.metric) {
			cr = evaluateMessages(c, t, s.Window > 0)
			line = messageClauseLine(cr, t)
		} else {
			cr = evaluate(c, scopes, basis, s.Window)
			if s.Window == 0 && f.lag != nil {
				// The whole test: the send lag the generator answers for.
				cr.lagP99 = histo.Millis(int64(Assess(t).LagP99))
			}
			line = clauseLine(cr)
		}
		errorsJudged = errorsJudged || c.metric == "errors"
		timeoutsJudged = timeoutsJudged || c.metric == "errors" || c.metric == "timeouts"
		if cr.Pass {
			out.Checked = append(out.Checked, line)
		} else {
			out.Pass = false
			out.Violations = append(out.Violations, line)
		}
		out.Clauses = append(out.Clauses, cr)
	}
	if failed := r.Counts.Errors + r.Counts.Timeouts; r.Counts.Errors > 0 && !errorsJudged || r.Counts.Timeouts > 0 && !timeoutsJudged {
		share := 0.0
		if r.Counts.Scheduled > 0 {
			share = 100 * float64(failed) / float64(r.Counts.Scheduled)
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d of %d requests (%s) ended in errors or timeouts, and the SLO has no errors clause",
			failed, r.Counts.Scheduled, formatValue(share, "%")))
	}
	return out, nil
}

// evaluate checks clause c on every scope (windows of length, or the whole
// test when length is 0) and keeps the worst.
func evaluate(c clause, scopes []scope, basis string, length time.Duration) ClauseResult {
	cr := ClauseResult{Clause: c.text, Metric: c.metric, Op: c.op, Bound: c.value, Unit: c.unit, Pass: true, Basis: basis, c: c}
	worst, worstV, worstOK, failed := -1, 0.0, false, 0
	for i, sc := range scopes {
		main := sc.resp
		if basis == "service" {
			main = sc.serv
		}
		v, ok := c.observe(sc, main)
		if !ok || !c.met(v) {
			failed++
		}
		if c.latency() {
			if sv, sok := c.observe(sc, sc.serv); !sok || !c.met(sv) {
				cr.serviceFails = true
			}
		}
		switch {
		case worst < 0,
			worstOK && !ok,
			worstOK && ok && (c.upper() && v > worstV || !c.upper() && v < worstV):
			worst, worstV, worstOK = i, v, ok
		}
	}
	cr.Pass = failed == 0
	if worst < 0 {
		return cr
	}
	sc := scopes[worst]
	if worstOK {
		v := round(worstV, 6)
		cr.Observed = &v
	}
	cr.lagP99, cr.scheduled, cr.dur = sc.lag.P99, sc.counts.Scheduled, sc.dur
	if c.latency() {
		cr.service, _ = c.observe(sc, sc.serv)
		cr.Client = clientShare(c, sc)
	}
	if length > 0 {
		cr.Window = &ClauseWindow{LengthS: round(length.Seconds(), 6), StartS: round(sc.start.Seconds(), 6), DurationS: round(sc.dur.Seconds(), 6), Windows: len(scopes), Failed: failed}
	}
	return cr
}

// windowGroup is one window of a test's interval series, before its
// histograms are merged.
type windowGroup struct {
	start, dur                    time.Duration
	counts                        scheduler.Counts
	resp, serv, lag, recv, hiccup []histo.Packed
}

// clauseLine words a clause's result: "p99 1.204 ms < 2.000 ms" when met,
// "p99 7.204 ms >= 2.000 ms (wanted p99<2ms)" when not, with the worst
// window's place when evaluated per window.
func clauseLine(cr ClauseResult) string {
	got := "no samples"
	if cr.Observed != nil {
		got = formatValue(*cr.Observed, cr.Unit)
	}
	var s string
	switch {
	case cr.Observed == nil:
		s = fmt.Sprintf("%s: no samples (wanted %s)", cr.Metric, cr.Clause)
	case cr.Pass:
		s = fmt.Sprintf("%s %s %s %s", cr.Metric, got, cr.Op, formatValue(cr.Bound, cr.Unit))
	default:
		s = fmt.Sprintf("%s %s %s %s (wanted %s)", cr.Metric, got, negate(cr.Op), formatValue(cr.Bound, cr.Unit), cr.Clause)
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

func formatValue(v float64, unit string) string {
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
		if c.c.metric == "" || !c.c.latency() || c.serviceFails || c.Basis != "response" && c.Basis != "delivery" {
			return false
		}
	}
	return true
}

// clientShare is what the client's parts amounted to in sc at clause c's
// metric, as a share of its bound.
func clientShare(c clause, sc scope) *ClientShare {
	out := &ClientShare{}
	part := func(s histo.Summary, ms, share **float64) {
		if s.Count == 0 {
			return
		}
		v, _ := c.observe(scope{}, s)
		v = round(v, 6)
		*ms = &v
		if c.value > 0 {
			sh := round(v/c.value, 4)
			*share = &sh
		}
	}
	part(sc.lag, &out.SendLagMs, &out.SendLagShare)
	part(sc.recv, &out.ReceiveLagMs, &out.ReceiveLagShare)
	part(sc.hiccup, &out.HostHiccupsMs, &out.HostHiccupsShare)
	return out
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
			s := name + " " + formatValue(*ms, "ms")
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
