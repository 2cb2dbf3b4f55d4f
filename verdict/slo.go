package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
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

// For refuses the clauses a command cannot judge: loss and lag are a
// message bus's (pacer pubsub, pacer stream; a cache's invalidations,
// pacer tracking, are lost too), and a consumer lag only a stream's.
// command is the command's name ("run", "pubsub", "stream", …).
func (s SLO) For(command string) error {
	messages := command == "pubsub" || command == "stream" || command == "tracking"
	for _, metric := range s.Metrics() {
		switch {
		case (metric == "loss" || metric == "lag") && !messages:
			return usage.Flagf("slo", "{slo} %s: only messages are lost or lag behind (pacer pubsub, pacer stream, pacer tracking)", metric)
		case metric == "lag" && command != "stream":
			return usage.Flagf("slo", "{slo} lag: a consumer lag is a stream's (pacer stream); pubsub and tracking have loss")
		}
	}
	return nil
}

// upper reports whether the clause bounds its metric from above (<, <=):
// a larger value is worse.
func (c clause) upper() bool { return c.op[0] == '<' }

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
func (s SLO) Check(t *report.Test) (*report.SLOResult, error) {
	if len(s.clauses) == 0 || t == nil {
		return nil, nil
	}
	f, err := t.Facts()
	if err != nil {
		return nil, err
	}
	out := &report.SLOResult{Spec: s.Spec, Pass: true, Clauses: []report.ClauseResult{}, Violations: []string{}, Checked: []string{}, Warnings: []string{}}
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
		out.WindowS = report.Round(s.Window.Seconds(), 6)
	} else {
		scopes = []scope{{dur: f.Window, counts: t.Counts, rate: t.Achieved(), unavailable: report.WorstUnavailable(t.Events),
			resp: histo.Summarize(f.Response), serv: histo.Summarize(f.Service), lag: histo.Summarize(f.Lag),
			recv: histo.Summarize(f.Receive), hiccup: histo.Summarize(f.Hiccups)}}
	}
	r := t
	errorsJudged, timeoutsJudged := false, false
	for _, c := range s.clauses {
		var cr report.ClauseResult
		line := ""
		if messageMetric(c.metric) {
			cr = evaluateMessages(c, t, s.Window > 0)
			line = messageClauseLine(cr, t)
		} else {
			cr = evaluate(c, scopes, basis, s.Window)
			if s.Window == 0 && f.Lag != nil {
				// The whole test: the send lag the generator answers for.
				cr.Figures.LagP99Ms = histo.Millis(int64(Assess(t).LagP99))
			}
			line = cr.Line()
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
			failed, r.Counts.Scheduled, report.FormatValue(share, "%")))
	}
	return out, nil
}

// evaluate checks clause c on every scope (windows of length, or the whole
// test when length is 0) and keeps the worst.
func evaluate(c clause, scopes []scope, basis string, length time.Duration) report.ClauseResult {
	cr := report.ClauseResult{Clause: c.text, Metric: c.metric, Op: c.op, Bound: c.value, Unit: c.unit, Pass: true, Basis: basis, Figures: &report.ClauseFigures{}}
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
				cr.Figures.ServiceFails = true
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
		v := report.Round(worstV, 6)
		cr.Observed = &v
	}
	cr.Figures.LagP99Ms, cr.Figures.Scheduled, cr.Figures.Duration = sc.lag.P99, sc.counts.Scheduled, sc.dur
	if c.latency() {
		cr.Figures.ServiceMs, _ = c.observe(sc, sc.serv)
		cr.Client = clientShare(c, sc)
	}
	if length > 0 {
		cr.Window = &report.ClauseWindow{LengthS: report.Round(length.Seconds(), 6), StartS: report.Round(sc.start.Seconds(), 6), DurationS: report.Round(sc.dur.Seconds(), 6), Windows: len(scopes), Failed: failed}
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

// clientShare is what the client's parts amounted to in sc at clause c's
// metric, as a share of its bound.
func clientShare(c clause, sc scope) *report.ClientShare {
	out := &report.ClientShare{}
	part := func(s histo.Summary, ms, share **float64) {
		if s.Count == 0 {
			return
		}
		v, _ := c.observe(scope{}, s)
		v = report.Round(v, 6)
		*ms = &v
		if c.value > 0 {
			sh := report.Round(v/c.value, 4)
			*share = &sh
		}
	}
	part(sc.lag, &out.SendLagMs, &out.SendLagShare)
	part(sc.recv, &out.ReceiveLagMs, &out.ReceiveLagShare)
	part(sc.hiccup, &out.HostHiccupsMs, &out.HostHiccupsShare)
	return out
}

// clauseOf is the clause a result evaluated, from its parts; the zero
// clause for one read back from JSON (no Figures), which the trust rule
// then treats as a clause it cannot place.
func clauseOf(cr report.ClauseResult) clause {
	if cr.Figures == nil {
		return clause{}
	}
	return clause{text: cr.Clause, metric: cr.Metric, op: cr.Op, value: cr.Bound, unit: cr.Unit}
}
