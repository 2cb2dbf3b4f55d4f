package pacer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Outcome is what a judged measurement concludes: Pass, Fail (the
// server's doing), Inconclusive (pacer's own lateness or its host's noise
// could explain it) or Error (the target was lost). Its String is the
// word text, JSON and docs use; ExitCode the command line's exit code.
type Outcome = verdict.Outcome

// The outcomes.
const (
	Pass         = verdict.Pass
	Fail         = verdict.Fail
	Inconclusive = verdict.Inconclusive
	Error        = verdict.Error
)

// Latency is a latency distribution's summary. A figure of no samples is
// 0 (Count says how many there were).
type Latency struct {
	Count                               int64
	Min, Mean, P50, P90, P95, P99, P999 time.Duration
	P9999, Max                          time.Duration
}

func latencyOf(s *histo.Summary) Latency {
	if s == nil {
		return Latency{}
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return Latency{Count: s.Count, Min: ms(s.Min), Mean: ms(s.Mean), P50: ms(s.P50), P90: ms(s.P90), P95: ms(s.P95),
		P99: ms(s.P99), P999: ms(s.P999), P9999: ms(s.P9999), Max: ms(s.Max)}
}

// Counts account for every scheduled request: Scheduled = Completed +
// Errors + Timeouts + Unsent, where Sent is what reached the wire.
type Counts struct {
	Scheduled, Sent, Completed, Errors, Timeouts, Unsent uint64
}

// Result is one test's result.
type Result struct {
	// Name is the test's display name ("GET", "SET at 1000/s").
	Name string
	// Counts account for every request; Rate is the completed requests
	// per second of the measured window, Duration that window.
	Counts   Counts
	Rate     float64
	Duration time.Duration
	// Response counts from each request's intended send time (the closed
	// loop's from its send), Service from its write; SendLag is how late
	// the requests left, ReceiveLag how late pacer read the replies, and
	// Hiccups how late the host's meter woke: pacer's and its host's
	// share, which the verdict weighs.
	Response, Service, SendLag, ReceiveLag, Hiccups Latency
	// Outcome is the verdict (without an SLO: Pass unless the load was
	// under-delivered, Inconclusive then, or the target lost), Reason why.
	Outcome Outcome
	Reason  string
	// Interrupted is set when ctx ended the run early.
	Interrupted bool
	// Test is the whole result, as the JSON document holds it.
	Test *report.Test
}

func newResult(t *report.Test) *Result {
	o, _ := verdict.Parse(t.Outcome)
	c := t.Counts
	return &Result{Name: t.Name, Test: t,
		Counts: Counts{Scheduled: c.Scheduled, Sent: c.Sent, Completed: c.Completed, Errors: c.Errors, Timeouts: c.Timeouts, Unsent: c.Unsent},
		Rate:   t.AchievedRate, Duration: time.Duration(t.DurationS * float64(time.Second)),
		Response: latencyOf(t.ResponseMs), Service: latencyOf(t.ServiceMs), SendLag: latencyOf(t.SendLagMs),
		ReceiveLag: latencyOf(t.ReceiveLagMs), Hiccups: latencyOf(t.HiccupMs),
		Outcome: o, Reason: t.VerdictReason, Interrupted: t.Interrupted}
}

// Check judges the result against an SLO, as --slo does ("p99<=2ms",
// "p99.9<10ms,errors<0.1%", "rate>=4900"): nil when it passes, else a
// *VerdictError whose Outcome says whose the miss is — Fail, the
// server's; Inconclusive, when pacer's own lateness or its host's noise
// could explain it (a test should not fail on it: see VerdictError) — or
// Error, the target lost. A malformed SLO is a *ConfigError.
func (r *Result) Check(slo string) error {
	s, err := parseSLO(slo)
	if err != nil {
		return err
	}
	t := *r.Test
	if t.SLO, err = s.Check(&t); err != nil {
		return err
	}
	j := verdict.Judge(&t)
	if j.Outcome == Pass {
		return nil
	}
	e := &VerdictError{Outcome: j.Outcome, Reason: j.Reason, Test: r.Name}
	if t.SLO != nil {
		e.Violations = t.SLO.Violations
		for _, c := range t.SLO.Clauses {
			if !c.Pass {
				e.Missed = append(e.Missed, c.Clause)
			}
		}
	}
	return e
}

// VerdictError is a result that did not pass: its Outcome (Fail,
// Inconclusive or Error), the verdict's Reason and, for an SLO, the
// clauses it missed (Missed, as written) with what was measured
// (Violations, one line each). errors.Is(err, ErrInconclusive) tells a miss pacer
// cannot vouch for from the server's own.
type VerdictError struct {
	Test       string
	Outcome    Outcome
	Reason     string
	Missed     []string
	Violations []string
}

func (e *VerdictError) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Test, e.Outcome)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is matches ErrFail, ErrInconclusive and ErrTargetLost by outcome.
func (e *VerdictError) Is(target error) bool {
	switch target {
	case ErrFail:
		return e.Outcome == Fail
	case ErrInconclusive:
		return e.Outcome == Inconclusive
	case ErrTargetLost:
		return e.Outcome == Error
	}
	return false
}

// The outcomes as errors, for errors.Is.
var (
	ErrFail         = errors.New("pacer: fail")
	ErrInconclusive = errors.New("pacer: inconclusive")
	ErrTargetLost   = errors.New("pacer: target lost")
)

// parseSLO reads an SLO as --slo does ("" is none).
func parseSLO(spec string) (verdict.SLO, error) {
	if strings.TrimSpace(spec) == "" {
		return verdict.SLO{}, nil
	}
	s, err := verdict.ParseSLO(spec)
	if err != nil {
		return s, &ConfigError{Field: "SLO", Err: errors.New(strings.TrimPrefix(err.Error(), "SLO "))}
	}
	return s, nil
}
