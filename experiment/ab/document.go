package ab

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Session names one comparison in both sides' documents, so that a
// reader can tell two sides of one ab from two of different ones: the
// seed and the start, in base 36.
func Session(seed uint64, start time.Time) string {
	return strconv.FormatUint(seed, 36) + "-" + strconv.FormatInt(start.UnixNano(), 36)
}

// Lost is a test whose target was lost (its judgement verdict.Error) on
// one side.
type Lost struct {
	Side         int
	Test, Reason string
}

// Error says which side lost its target, in which test, and why, on one
// line: "b: get: target lost: …".
func (l *Lost) Error() string {
	return fmt.Sprintf("%s: %s: target lost: %s", SideName(l.Side), l.Test, safetext.Line(l.Reason))
}

// Document sets side s's tests in its document (Tests, with the
// percentiles) and returns the first of them whose target was lost (nil:
// none).
func (r *Result) Document(s int, tests []experiment.Test, doc *report.Document) (*Lost, error) {
	ts, js, err := r.Tests(s, tests, report.TestOptions{Percentiles: true})
	if err != nil {
		return nil, err
	}
	doc.Tests = ts
	for i, j := range js {
		if j.Outcome == verdict.Error {
			return &Lost{Side: s, Test: ts[i].Name, Reason: j.Reason}, nil
		}
	}
	return nil, nil
}

// Documents makes both sides' documents: newDoc gives side s's (its
// header and config), Document sets its tests. Lost is the first test
// whose target was lost, on side A first (nil: none).
func (r *Result) Documents(tests []experiment.Test, newDoc func(s int) *report.Document) ([2]*report.Document, *Lost, error) {
	var docs [2]*report.Document
	var lost *Lost
	for s := range docs {
		docs[s] = newDoc(s)
		l, err := r.Document(s, tests, docs[s])
		if err != nil {
			return docs, nil, err
		}
		if lost == nil {
			lost = l
		}
	}
	return docs, lost, nil
}

// Compare is diff's comparison of the sides' documents, baseline A and
// candidate B, each read back as diff reads a file (labels name them,
// targets say what each measured): what pacer ab ends with, and what
// pacer diff of the two files would say.
func Compare(docs [2]*report.Document, labels, targets [2]string, o diff.Options) (*diff.Document, error) {
	var sides [2]diff.Side
	for s, doc := range docs {
		b, err := doc.Marshal()
		if err != nil {
			return nil, err
		}
		in, err := report.ReadInput(labels[s], b)
		if err != nil {
			return nil, err
		}
		sides[s] = diff.Side{Inputs: []report.Input{in}, Target: targets[s]}
	}
	return diff.Compare(sides[A], sides[B], o)
}

// Mode is the session's loop as the documents name it: "open" or
// "closed".
func (c Config) Mode() string {
	if c.Open == nil {
		return "closed"
	}
	return "open"
}

// Plan says in one line what a session runs: "6 rounds of 5s (after 1s
// warm-up each), 10000 req/s uniform, 50 connections, in the order
// ABBA BAAB …".
func (c Config) Plan() string {
	var what string
	if c.Open != nil {
		what = c.Open.Rate.String() + " req/s " + c.Open.Arrival
	} else {
		what = "closed loop, -P " + strconv.Itoa(c.Closed.Pipeline)
	}
	order := "in the order " + OrderText(c.Rounds)
	if c.Duet {
		order = "both sides of a round at once (duet)"
	}
	plan := fmt.Sprintf("%d rounds of %s (after %s warm-up each), %s, %d connections, %s",
		c.Rounds, c.RoundDuration, c.Warmup, what, c.Conns, order)
	if c.Budget > 0 {
		plan += fmt.Sprintf("; then, while a test's gate cannot decide, two rounds more at a time, for at most %s a test", c.Budget)
	}
	return plan
}

// Echo is the "ab" part of side s's config echo: the session, the side,
// both targets as shown, the rounds, their order ("duet" for rounds whose
// sides ran at once, with duet true), and whether both targets were
// filled first.
func (c Config) Echo(session string, s int, shown [2]string, filled bool) map[string]any {
	echo := map[string]any{
		"session": session, "side": SideName(s), "a": shown[0], "b": shown[1],
		"rounds": c.Rounds, "round_duration_s": c.RoundDuration.Seconds(), "warmup_s": c.Warmup.Seconds(),
		"order": OrderText(c.Rounds), "fill": filled,
	}
	if c.Budget > 0 {
		echo["decide_within_s"] = c.Budget.Seconds()
	}
	if c.Duet {
		echo["order"], echo["duet"] = "duet", true
	}
	return echo
}

// LookAt is Measure's look as pacer ab takes it: test l.Test's rounds so
// far compared at l.Level, in documents newDoc heads as the session's
// end does (labels and targets as Compare's), and whether o's gate
// decided the test: pass or fail on every clause together. A look that
// cannot compare decides nothing; what went wrong shows when the
// session's end compares again.
func (r *Result) LookAt(l Look, tests []experiment.Test, newDoc func(s int) *report.Document, labels, targets [2]string, o diff.Options) bool {
	docs, lost, err := r.Documents(tests, newDoc)
	if err != nil || lost != nil {
		return false
	}
	id := tests[l.Test].ID
	o.Decide = map[string]*diff.Decide{id: {Level: l.Level}}
	d, err := Compare(docs, labels, targets, o)
	if err != nil || d.Gate == nil {
		return false
	}
	var outs []verdict.Outcome
	for _, t := range d.Tests {
		if t.ID != id {
			continue
		}
		for _, c := range d.Gate.Clauses {
			if c.Test != t.Name {
				continue
			}
			out, err := verdict.Parse(c.Outcome)
			if err != nil {
				out = verdict.Inconclusive
			}
			outs = append(outs, out)
		}
	}
	all := verdict.Conjunction(outs...)
	return len(outs) > 0 && (all == verdict.Pass || all == verdict.Fail)
}

// Decides is how each test used the budget, by test ID, for
// diff.Options.Decide (nil without a budget).
func (r *Result) Decides(tests []experiment.Test) map[string]*diff.Decide {
	var out map[string]*diff.Decide
	for ti, d := range r.Decide {
		if d != nil && ti < len(tests) {
			if out == nil {
				out = map[string]*diff.Decide{}
			}
			out[tests[ti].ID] = d
		}
	}
	return out
}
