package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/verdict"
)

// Identical is the method of a comparison whose sides hold the same runs
// (a result compared with itself): the change is 0 exactly, as the
// difference of a figure with itself is.
const Identical = "identical"

// kind is what a figure measures.
type kind int8

const (
	latency kind = iota
	throughput
	errorRate
)

// spec is one figure to compare.
type spec struct {
	kind kind
	q    float64 // the percentile of a latency
	// service compares the service time's percentile (the server's
	// side) instead of the response time's.
	service bool
}

func (f spec) name() string {
	switch f.kind {
	case throughput:
		return "throughput"
	case errorRate:
		return "errors"
	}
	return report.PercentileLabel(f.q)
}

func (f spec) unit() string {
	switch f.kind {
	case throughput:
		return "req/s"
	case errorRate:
		return "%"
	}
	return "ms"
}

func (f spec) scale() stats.Scale {
	if f.kind == errorRate {
		return stats.Absolute
	}
	return stats.Relative
}

func (f spec) dir() stats.Direction {
	if f.kind == throughput {
		return stats.LowerIsWorse
	}
	return stats.HigherIsWorse
}

// value is run t's figure; ok is false when it has none (no latencies,
// nothing scheduled).
func (f spec) value(t *report.Test) (float64, bool) {
	switch f.kind {
	case throughput:
		return t.Achieved(), t.Window() > 0
	case errorRate:
		c := t.Counts
		if c.Scheduled == 0 {
			return 0, false
		}
		return 100 * float64(c.Errors+c.Timeouts) / float64(c.Scheduled), true
	}
	h, svc, _ := t.LatencyHistograms()
	if f.service {
		h = svc
	}
	if h == nil || h.TotalCount() == 0 {
		return 0, false
	}
	return histo.Millis(h.ValueAtQuantile(f.q)), true
}

// values are a side's per-run figures, or why it has none.
func (f spec) values(s *sample) ([]float64, string) {
	out := make([]float64, len(s.runs))
	for i, r := range s.runs {
		v, ok := f.value(r)
		if !ok {
			what := "no latencies"
			switch {
			case f.kind == latency && r.Lacking("histograms"):
				what = "no histogram (its file's format holds none)"
			case f.kind != latency:
				what = "nothing scheduled"
			}
			return nil, what + " in " + s.where[i]
		}
		out[i] = v
	}
	return out, ""
}

// how is how a matched test's changes are found: its method and, for
// a side of one run, its block intervals of the percentiles of its
// response time ([0]) and, when asked for, its service time ([1]).
type how struct {
	method    string
	blocks    [2][2]map[float64]stats.PercentileInterval
	blocksWhy [2][2]string
}

// of is the index of f's latency series in how's arrays.
func (f spec) of() int {
	if f.service {
		return 1
	}
	return 0
}

// compareFigure compares one figure of a matched test.
func (c *comparer) compareFigure(p pair, h *how, f spec) Figure {
	out := Figure{Figure: f.name(), Unit: f.unit(), Method: h.method,
		NBaseline: len(p.base.runs), NCandidate: len(p.cand.runs), Word: string(stats.CannotTell)}
	if f.kind == latency {
		out.P = f.q
	}
	ch, sideB, sideC, err := c.figureChange(p, h, f)
	out.BaselineInterval, out.CandidateInterval = ends(sideB), ends(sideC)
	if err != "" {
		out.Why = err
		return out
	}
	out.Baseline, out.Candidate = Value(ch.Base), Value(ch.Cand)
	change := ch.Cand - ch.Base
	out.Change = Value(change)
	if f.scale() == stats.Relative {
		out.ChangePct = Value(100 * ch.Estimate)
		out.IntervalPct = Ends(100*ch.Lo, 100*ch.Hi)
		out.Interval = Ends(ch.Base*ch.Lo, ch.Base*ch.Hi)
	} else {
		out.Interval = Ends(ch.Lo, ch.Hi)
	}
	if h.method == Identical {
		out.Word = string(stats.Same)
		return out
	}
	// Each side's own account first: a side untrusted by its verdict,
	// too thin beyond the percentile, or too noisy at it, cannot make it
	// worse, better or the same on its own.
	var lostB, lostC bool
	out.BaselineUntrusted, lostB = c.untrusted(p.base)
	out.CandidateUntrusted, lostC = c.untrusted(p.cand)
	if f.kind == latency {
		if ms, measured, noisy := c.noise(p.base).at(f.q); measured {
			out.BaselineNoiseMs, out.BaselineNoisy = &ms, noisy
		}
		if ms, measured, noisy := c.noise(p.cand).at(f.q); measured {
			out.CandidateNoiseMs, out.CandidateNoisy = &ms, noisy
		}
		if why := p.base.tooFew(f.q); why != "" {
			out.TooFew = "the baseline has " + why
		} else if why := p.cand.tooFew(f.q); why != "" {
			out.TooFew = "the candidate has " + why
		}
	}
	untrusted := "the baseline is untrusted by its own verdict: " + out.BaselineUntrusted
	if out.BaselineUntrusted == "" {
		untrusted = "the candidate is untrusted by its own verdict: " + out.CandidateUntrusted
	}
	word, why := ch.Classify(c.margin(f), f.dir())
	if word == stats.CannotTell && strings.Contains(why, "wider than") {
		why += c.widthHint(p, h, f)
	}
	switch {
	case lostB || lostC:
		word, why = stats.CannotTell, untrusted
	case out.TooFew != "":
		word, why = stats.CannotTell, "too few samples: "+out.TooFew
	case out.BaselineUntrusted+out.CandidateUntrusted != "" && f.kind == throughput:
		word, why = stats.CannotTell, untrusted+" (the generator's lateness lowers the throughput it delivers)"
	case out.BaselineUntrusted+out.CandidateUntrusted != "" && f.kind == latency:
		// The attribution of --slo: what the generator's lateness (or
		// the client's part a miss was put down to) may have done to the
		// response time, it did not do to the service time, the
		// server's side. The word stands where the server's side says
		// it too.
		svc := c.serviceOf(p, h, f)
		out.Service = &svc
		switch {
		case word == stats.CannotTell:
			why = fmt.Sprintf("%s; %s", why, untrusted)
		case word == stats.Same:
			// As the gate's pass (clause.untrusted): the stalls that
			// made the side untrusted reach the server's side too.
			word, why = stats.CannotTell, fmt.Sprintf("%s; an untrusted side cannot be the same: the host's stalls that made it so could hide a change (service %s %s)",
				untrusted, f.name(), serviceText(svc))
		case stats.Word(svc.Word) != word:
			word, why = stats.CannotTell, fmt.Sprintf("%s; the server's side does not say %s: service %s %s",
				untrusted, word, f.name(), serviceText(svc))
		}
	}
	// A change the client host's noise could account for is not the
	// server's (the attribution of --slo), unless the service time, which
	// that noise does not touch, changed as surely: a surely slower side
	// gets its service time compared too, for the word and the gate.
	if f.kind == latency && out.Service == nil && (ch.Lo > 0 && out.CandidateNoiseMs != nil || ch.Hi < 0 && out.BaselineNoiseMs != nil) {
		svc := c.serviceOf(p, h, f)
		out.Service = &svc
	}
	serverSays := func(w stats.Word) bool { return out.Service != nil && stats.Word(out.Service.Word) == w }
	svc := "not compared"
	if out.Service != nil {
		svc = serviceText(*out.Service)
	}
	switch {
	case word == stats.Worse && noiseAccounts(out.CandidateNoisy, out.CandidateNoiseMs, ch.Base*ch.Lo, out.Paired()) && !serverSays(stats.Worse):
		word, why = stats.CannotTell, fmt.Sprintf("the candidate's client host was too noisy to tell (%s): its noise there (%.3f ms) could account for the change (at least %+.3f ms), and the server's side does not say worse (service %s %s)",
			out.CandidateNoisy, *out.CandidateNoiseMs, ch.Base*ch.Lo, f.name(), svc)
	case word == stats.Better && noiseAccounts(out.BaselineNoisy, out.BaselineNoiseMs, -ch.Base*ch.Hi, out.Paired()) && !serverSays(stats.Better):
		word, why = stats.CannotTell, fmt.Sprintf("the baseline's client host was too noisy to tell (%s): its noise there (%.3f ms) could account for the change (at least %+.3f ms), and the server's side does not say better (service %s %s)",
			out.BaselineNoisy, *out.BaselineNoiseMs, ch.Base*ch.Hi, f.name(), svc)
	}
	out.Word, out.Why = string(word), why
	return out
}

// figureChange is figure f's change with each side's own interval, or
// why there is none.
func (c *comparer) figureChange(p pair, h *how, f spec) (stats.Change, *stats.Interval, *stats.Interval, string) {
	vb, whyB := f.values(p.base)
	vc, whyC := f.values(p.cand)
	switch {
	case whyB != "":
		return stats.Change{}, nil, nil, "the baseline has " + whyB
	case whyC != "":
		return stats.Change{}, nil, nil, "the candidate has " + whyC
	}
	return c.change(p, h, f, vb, vc)
}

// serviceOf compares the service time at f's percentile as the response
// time's was compared.
func (c *comparer) serviceOf(p pair, h *how, f spec) Service {
	f.service = true
	ch, _, _, err := c.figureChange(p, h, f)
	if err != "" {
		return Service{Word: string(stats.CannotTell), Why: err}
	}
	w, why := ch.Classify(c.margin(f), f.dir())
	return Service{ChangePct: Value(100 * ch.Estimate), IntervalPct: Ends(100*ch.Lo, 100*ch.Hi), Word: string(w), Why: why}
}

// serviceText is a service time's change as the reasons quote it.
func serviceText(s Service) string {
	if s.ChangePct == nil || len(s.IntervalPct) != 2 {
		return s.Word + " (" + s.Why + ")"
	}
	end := func(v *float64) string {
		if v == nil {
			return "…"
		}
		return fmt.Sprintf("%+.1f%%", *v)
	}
	return fmt.Sprintf("%+.1f%% [%s, %s], %s", *s.ChangePct, end(s.IntervalPct[0]), end(s.IntervalPct[1]), s.Word)
}

// noiseAccounts reports whether a side's client host noise could account
// for a change of at least changeMs on its side (the trust rule's
// attribution: a difference larger than the client's noise could add is
// the server's, on a host however busy): the side was noisy at the
// figure, and its noise is at least the change. Interleaved rounds put
// the host's noise on both sides alike, so a change that holds across
// them is not the host's (paired).
func noiseAccounts(noisy string, noiseMs *float64, changeMs float64, paired bool) bool {
	return !paired && noisy != "" && noiseMs != nil && *noiseMs >= changeMs
}

// hint says what narrows an interval wider than the margin, by method.
func hint(method string) string {
	switch method {
	case string(stats.Runs), string(stats.RunsOneSide):
		return ": too few runs for the spread seen between them (more runs per side narrow it)"
	case string(stats.PairedRuns):
		return ": too few rounds for the spread seen between them (more --rounds narrow it)"
	case string(stats.Blocks):
		return ": one run per side (a longer run, or repeats on each side, narrow it)"
	}
	return ""
}

// widthHint says what would narrow an interval too wide to decide: more
// runs or rounds, or, where the rounds of a paired comparison moved with
// the client host's own noise at the percentile, a quieter client host,
// which more rounds narrow only slowly (their figures spread as the
// noise does).
func (c *comparer) widthHint(p pair, h *how, f spec) string {
	if h.method == string(stats.PairedRuns) && f.kind == latency {
		if noisy, measured := noisyRounds(p, f.q); noisy > 0 {
			return fmt.Sprintf(": in %d of the %d rounds the client host's own noise at %s (host hiccups, pacer's receive lag) was at least %.0f%% of a side's figure there, and the rounds' figures spread with it (a quieter client host narrows it; more --rounds, slowly)",
				noisy, measured, f.name(), 100*verdict.QuietShare)
		}
	}
	return hint(h.method)
}

// ends is a side's interval for the document (nil: none).
func ends(iv *stats.Interval) []*float64 {
	if iv == nil {
		return nil
	}
	return Ends(iv.Lo, iv.Hi)
}

// change finds the change of figure f by the test's method, with each
// side's own interval (nil where there is none); err says why there is
// no change.
func (c *comparer) change(p pair, h *how, f spec, vb, vc []float64) (stats.Change, *stats.Interval, *stats.Interval, string) {
	sc := f.scale()
	side := func(v []float64, s int) *stats.Interval {
		if len(v) >= 2 {
			if iv, err := stats.RunsInterval(v, sc, c.level); err == nil {
				return &iv
			}
			return nil
		}
		if iv, ok := c.blockInterval(p, h, f, s); ok {
			return &iv
		}
		return nil
	}
	var ch stats.Change
	var err error
	switch h.method {
	case Identical:
		m := mean(vb, sc)
		iv := side(vb, 0)
		return stats.Change{Base: m, Cand: m, Scale: sc, NBase: len(vb), NCand: len(vc),
			Interval: stats.Interval{Level: c.level}}, iv, iv, ""
	case string(stats.PairedRuns):
		ch, err = stats.ChangePaired(vb, vc, sc, c.level)
	case string(stats.Blocks):
		eb, okB := c.blockEstimate(p, h, f, 0)
		ec, okC := c.blockEstimate(p, h, f, 1)
		if !okB || !okC {
			return ch, side(vb, 0), side(vc, 1), c.blocksWhy(h, okB, f.of())
		}
		ch, err = stats.ChangeOfIntervals(eb, ec, sc, c.level)
	default:
		ch, err = stats.ChangeOverRuns(vb, vc, sc, c.level)
	}
	sb, scd := side(vb, 0), side(vc, 1)
	switch {
	case err == stats.ErrNotPositive:
		return ch, sb, scd, "a side's figure is zero: it has no relative change"
	case err != nil:
		return ch, sb, scd, err.Error()
	}
	return ch, sb, scd, ""
}

// blocksWhy says why one run a side gave no interval.
func (c *comparer) blocksWhy(h *how, baseOK bool, k int) string {
	if !baseOK && h.blocksWhy[0][k] != "" {
		return "the baseline's run: " + h.blocksWhy[0][k]
	}
	if h.blocksWhy[1][k] != "" {
		return "the candidate's run: " + h.blocksWhy[1][k]
	}
	return "one run per side, and no interval from its intervals"
}

// mean is the (geometric, for a relative figure) mean of v.
func mean(v []float64, sc stats.Scale) float64 {
	var s float64
	for _, x := range v {
		if sc == stats.Relative {
			s += math.Log(x)
		} else {
			s += x
		}
	}
	m := s / float64(len(v))
	if sc == stats.Relative {
		return math.Exp(m)
	}
	return m
}
