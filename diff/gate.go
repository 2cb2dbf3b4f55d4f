package diff

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/verdict"
)

// Gate is a regression gate (--max-regression): how much worse the
// candidate may be, figure by figure.
type Gate struct {
	spec    string
	clauses []clause
}

// clause is one figure's allowance: a fraction for a percentile or the
// throughput, percentage points for the error rate.
type clause struct {
	text  string
	f     spec
	allow float64
}

// ParseGate reads --max-regression: comma-separated FIGURE:ALLOWANCE
// clauses, a figure being a percentile (p99, p99.9), throughput or
// errors, an allowance a number and % (for errors, percentage points of
// the scheduled requests): 'p99:10%,p99.9:20%,throughput:5%,errors:0.1%'.
// Its errors are usage errors.
func ParseGate(s string) (Gate, error) {
	g := Gate{spec: strings.TrimSpace(s)}
	if g.spec == "" {
		return g, usage.Flagf("max-regression", "{max-regression} %q: want clauses such as p99:10%%,throughput:5%%,errors:0.1%%", s)
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, allow, ok := strings.Cut(part, ":")
		if !ok {
			return g, usage.Flagf("max-regression", "{max-regression} %q: %q is not FIGURE:ALLOWANCE (p99:10%%)", s, part)
		}
		name, allow = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(allow)
		var f spec
		switch {
		case name == "throughput":
			f = spec{kind: throughput}
		case name == "errors":
			f = spec{kind: errorRate}
		case strings.HasPrefix(name, "p"):
			q, err := strconv.ParseFloat(name[1:], 64)
			if err != nil || !(q > 0 && q < 100) {
				return g, usage.Flagf("max-regression", "{max-regression} %q: %q is not a percentile above p0 and below p100", s, name)
			}
			f = spec{kind: latency, q: q}
		default:
			return g, usage.Flagf("max-regression", "{max-regression} %q: unknown figure %q (want a percentile such as p99, throughput or errors)", s, name)
		}
		if seen[f.name()] {
			return g, usage.Flagf("max-regression", "{max-regression} %q: %s given twice", s, f.name())
		}
		seen[f.name()] = true
		num, isPct := strings.CutSuffix(allow, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if !isPct || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return g, usage.Flagf("max-regression", "{max-regression} %q: allowance %q of %s: want a percentage such as 10%%", s, allow, f.name())
		}
		c := clause{text: f.name() + ":" + allow, f: f, allow: v}
		if f.kind != errorRate {
			c.allow = v / 100
		}
		g.clauses = append(g.clauses, c)
	}
	return g, nil
}

// IsZero reports whether the gate has no clause.
func (g Gate) IsZero() bool { return len(g.clauses) == 0 }

// percentiles are the percentiles the gate judges.
func (g Gate) percentiles() []float64 {
	var out []float64
	for _, c := range g.clauses {
		if c.f.kind == latency {
			out = append(out, c.f.q)
		}
	}
	return out
}

// Decide holds every matched test of d to every clause, and the clauses
// together (verdict.Conjunction): fail when some clause is surely beyond
// its allowance (the interval's better end is beyond it), pass when
// every clause surely is not (the interval's worse end is within it),
// inconclusive otherwise, with the line that says why (the first failing
// clause, else the first undecided one). A side whose
// own verdict is untrusted decides nothing; a candidate whose client host
// was too noisy at a percentile cannot fail it, and outside interleaved
// rounds a baseline too noisy cannot pass it (a noisy side's figure is
// the higher for it), unless the interval clears the allowance by more
// than that noise (see noiseBeyond).
func (g Gate) Decide(d *Document) GateResult {
	out := GateResult{Spec: g.spec}
	var all []verdict.Outcome
	why := map[verdict.Outcome]string{}
	for _, t := range d.Tests {
		for _, c := range g.clauses {
			o, w := c.judge(t)
			out.Clauses = append(out.Clauses, ClauseResult{Test: t.Name, Clause: c.text, Outcome: o.String(), Why: w})
			all = append(all, o)
			if _, ok := why[o]; !ok {
				why[o] = w
			}
		}
	}
	o := verdict.Conjunction(all...)
	out.Outcome, out.Reason = o.String(), why[o]
	if o == verdict.Pass {
		out.Reason = "every clause is surely within its allowance"
	}
	return out
}

// Outcome is the gate's decision as a verdict (Pass without a gate).
func Outcome(d *Document) verdict.Outcome {
	if d.Gate == nil {
		return verdict.Pass
	}
	o, err := verdict.Parse(d.Gate.Outcome)
	if err != nil {
		return verdict.Inconclusive
	}
	return o
}

// judge holds one test's figure to the clause.
func (c clause) judge(t Test) (verdict.Outcome, string) {
	what := fmt.Sprintf("%s of %s", c.f.name(), t.Name)
	var f *Figure
	for i := range t.Figures {
		if t.Figures[i].Figure == c.f.name() {
			f = &t.Figures[i]
		}
	}
	switch {
	case f == nil:
		return verdict.Inconclusive, what + ": not compared"
	case f.TooFew != "":
		return verdict.Inconclusive, what + ": too few samples: " + f.TooFew
	}
	lo, hi, ok := bounds(f)
	if !ok {
		why := f.Why
		if why == "" {
			why = "no interval"
		}
		return verdict.Inconclusive, what + ": " + why
	}
	ch := stats.Change{Interval: stats.Interval{Lo: lo, Hi: hi}}
	shown := c.changeText(f)
	decided := ch.Against(c.allow, c.f.dir())
	if why := c.untrusted(f, decided); why != "" {
		return verdict.Inconclusive, what + ": " + why
	}
	switch decided {
	case stats.Exceeded:
		noise, whose := candidateNoise(f)
		if noise, by, ok := c.noiseBeyond(f, noise, lo-c.allow); ok {
			if c.serviceExceeds(f) {
				return verdict.Fail, fmt.Sprintf("%s: %s is surely beyond the %s allowance: the candidate's client host noise there (%.3f ms: %s) could account for the %.3f ms it clears it by, but not the service time's change, beyond it too (service %s %s), which that noise does not touch",
					what, shown, c.allowText(), noise, whose, by, c.f.name(), serviceText(*f.Service))
			}
			return verdict.Inconclusive, fmt.Sprintf("%s: %s is beyond the %s allowance by at least %.3f ms, which the candidate's client host noise there (%.3f ms: %s) could account for: it cannot fail the gate",
				what, shown, c.allowText(), by, noise, whose)
		}
		return verdict.Fail, fmt.Sprintf("%s: %s is surely beyond the %s allowance", what, shown, c.allowText())
	case stats.Within:
		if noise, by, ok := c.noiseBeyond(f, f.BaselineNoiseMs, c.allow-hi); ok && !f.Paired() {
			return verdict.Inconclusive, fmt.Sprintf("%s: %s is within the %s allowance by %.3f ms, which the baseline's client host noise there (%.3f ms: hiccups + receive lag) could account for: it cannot pass the gate",
				what, shown, c.allowText(), by, noise)
		}
		return verdict.Pass, fmt.Sprintf("%s: %s is surely within the %s allowance", what, shown, c.allowText())
	}
	return verdict.Inconclusive, fmt.Sprintf("%s: %s straddles the %s allowance: cannot tell", what, shown, c.allowText())
}

// untrusted says why a side that its own verdict does not trust keeps
// the clause from deciding ("" when it does not): a lost target always;
// the generator's lateness (generator_behind, or an SLO's miss put down
// to the client) when the figure is the throughput it lowers, or a
// latency whose service time (the server's side, which that lateness
// does not touch) does not decide the same; and a pass always. The
// host's stalls that made the side untrusted stall the server's process
// too, on its host, and a side's service time carries them: in a session
// whose every run was so (a 30% slower server, its twelve runs all
// untrusted, its rounds' p99 −20 −29 −42 −35 −2 +25%), both times came
// out "surely within 10%". A failure rests on the server's side
// surely beyond the allowance, which stalls spread over the rounds of
// both sides do not make; a pass would rest on their absence, which an
// untrusted side cannot show. Errors and timeouts are the server's
// answers, whatever the generator did.
func (c clause) untrusted(f *Figure, decided stats.Verdict) string {
	who, why := "baseline", f.BaselineUntrusted
	if why == "" {
		who, why = "candidate", f.CandidateUntrusted
	}
	untrusted := "the " + who + " is untrusted by its own verdict: " + why
	switch {
	case why == "" || c.f.kind == errorRate:
		return ""
	case strings.Contains(f.BaselineUntrusted+f.CandidateUntrusted, "verdict "+report.VerdictTargetLost) || c.f.kind == throughput:
		return untrusted
	case decided == stats.Within:
		return untrusted + "; an untrusted side cannot pass the gate: the host's stalls that made it so could hide a regression"
	case f.Service == nil || len(f.Service.IntervalPct) != 2 || f.Service.IntervalPct[0] == nil && f.Service.IntervalPct[1] == nil:
		return untrusted + "; the server's side has no interval"
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if v := f.Service.IntervalPct[0]; v != nil {
		lo = *v / 100
	}
	if v := f.Service.IntervalPct[1]; v != nil {
		hi = *v / 100
	}
	if svc := (stats.Change{Interval: stats.Interval{Lo: lo, Hi: hi}}).Against(c.allow, c.f.dir()); svc != decided {
		return fmt.Sprintf("%s; the server's side does not decide it: service %s %s", untrusted, c.f.name(), serviceText(*f.Service))
	}
	return ""
}

// serviceExceeds reports whether the service time's change at the
// clause's percentile (the server's side: from the write to the reply's
// arrival, which pacer's lateness and the client host's stalls do not
// touch) lies surely beyond the allowance too.
func (c clause) serviceExceeds(f *Figure) bool {
	if c.f.kind != latency || f.Service == nil || len(f.Service.IntervalPct) != 2 || f.Service.IntervalPct[0] == nil {
		return false
	}
	lo, hi := *f.Service.IntervalPct[0]/100, math.Inf(1)
	if v := f.Service.IntervalPct[1]; v != nil {
		hi = *v / 100
	}
	return (stats.Change{Interval: stats.Interval{Lo: lo, Hi: hi}}).Against(c.allow, c.f.dir()) == stats.Exceeded
}

// noiseBeyond holds a latency clause to the trust rule's attribution: the
// allowed value (the baseline's figure, plus the allowance) is the bound;
// a side's client host noise at the percentile (hiccups + receive lag)
// that is a material share of it (verdict.QuietShare), and at least the
// margin by which the interval clears the allowance (share, a fraction
// of the baseline), could have made that margin: ok, with the noise and
// the margin in ms. A margin larger than the noise is the server's, on a
// host however busy.
func (c clause) noiseBeyond(f *Figure, noise *float64, share float64) (float64, float64, bool) {
	if c.f.kind != latency || noise == nil || f.Baseline == nil {
		return 0, 0, false
	}
	bound := *f.Baseline * (1 + c.allow)
	by := *f.Baseline * share
	return *noise, by, *noise >= verdict.QuietShare*bound && *noise >= by
}

// candidateNoise is the client host's noise that could account for the
// candidate's figure being higher, and what it is. In interleaved rounds
// (paired) the host's own noise falls on both sides alike, so only the
// candidate's noise beyond the baseline's is its own (none when the
// baseline's was as high); otherwise all of it.
func candidateNoise(f *Figure) (*float64, string) {
	const what = "hiccups + receive lag"
	if !f.Paired() || f.CandidateNoiseMs == nil || f.BaselineNoiseMs == nil {
		return f.CandidateNoiseMs, what
	}
	excess := max(0, *f.CandidateNoiseMs-*f.BaselineNoiseMs)
	return &excess, fmt.Sprintf("%s beyond the baseline's %.3f ms in the same rounds", what, *f.BaselineNoiseMs)
}

// bounds are the interval of f's change on the scale the allowance is
// in (a fraction, or percentage points); an unbounded end is infinite.
func bounds(f *Figure) (lo, hi float64, ok bool) {
	iv, k := f.Interval, 1.0
	if f.Relative() {
		iv, k = f.IntervalPct, 100
	}
	if len(iv) != 2 || iv[0] == nil && iv[1] == nil {
		return 0, 0, false
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	if iv[0] != nil {
		lo = *iv[0] / k
	}
	if iv[1] != nil {
		hi = *iv[1] / k
	}
	return lo, hi, true
}

// allowText is the allowance as given.
func (c clause) allowText() string {
	_, a, _ := strings.Cut(c.text, ":")
	if c.f.kind == errorRate {
		return strings.TrimSuffix(a, "%") + "-point"
	}
	return a
}

// changeText is f's change and interval as the gate's lines say them.
func (c clause) changeText(f *Figure) string {
	end := func(v *float64, unit string, digits int) string {
		if v == nil {
			return "…"
		}
		return strconv.FormatFloat(*v, 'f', digits, 64) + unit
	}
	sign := func(s string) string {
		if !strings.HasPrefix(s, "-") && s != "…" {
			return "+" + s
		}
		return s
	}
	if f.Relative() {
		return fmt.Sprintf("%s [%s, %s]", sign(end(f.ChangePct, "%", 1)), sign(end(f.IntervalPct[0], "%", 1)), sign(end(f.IntervalPct[1], "%", 1)))
	}
	return fmt.Sprintf("%s [%s, %s] points", sign(end(f.Change, "", 3)), sign(end(f.Interval[0], "", 3)), sign(end(f.Interval[1], "", 3)))
}
