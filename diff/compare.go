package diff

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/stats"
)

// Defaults of a comparison.
var (
	// DefaultPercentiles are the percentiles of the table.
	DefaultPercentiles = []float64{50, 90, 99, 99.9}
	// SpectrumPercentiles are the percentiles the pictures draw, besides
	// the table's.
	SpectrumPercentiles = []float64{10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}
)

const (
	// DefaultEquivalence is --equivalence: a change within ±5% is no
	// change.
	DefaultEquivalence = 0.05
	// DefaultErrorEquivalence is --equivalence-errors, in percentage
	// points of the scheduled requests.
	DefaultErrorEquivalence = 0.1
)

// Options are how a comparison is made. The zero value takes the
// defaults.
type Options struct {
	// Percentiles are the table's (DefaultPercentiles when empty); the
	// gate's are added.
	Percentiles []float64
	// Equivalence is the margin of latencies and throughput, a fraction
	// (0.05 is ±5%); ErrorEquivalence that of the error rate, in
	// percentage points.
	Equivalence, ErrorEquivalence float64
	// Gate is --max-regression (the zero Gate decides nothing).
	Gate Gate
	// Version is pacer's, for the document.
	Version string
	// Spectrum adds the pictures' percentiles (Test.Spectrum).
	Spectrum bool
	// Decide holds, by test ID, how a pacer ab session with
	// --decide-within used its budget on the test (Test.Decide): the
	// test's intervals are then at its Level.
	Decide map[string]*Decide
}

// ErrNoMatch is returned (as a usage error) when no test of the baseline
// matches one of the candidate.
var ErrNoMatch = errors.New("nothing to compare")

// comparer holds a comparison's settings and what it learned of each
// side once.
type comparer struct {
	o       Options
	level   float64
	trusted map[*sample]trust
	noises  map[*sample]hostNoise
}

// trust is a side's own verdict on its numbers (sample.untrusted).
type trust struct {
	why  string
	lost bool
}

func (c *comparer) margin(f spec) float64 {
	if f.kind == errorRate {
		return c.o.ErrorEquivalence
	}
	return c.o.Equivalence
}

func (c *comparer) untrusted(s *sample) (string, bool) {
	t, ok := c.trusted[s]
	if !ok {
		t.why, t.lost = s.untrusted()
		c.trusted[s] = t
	}
	return t.why, t.lost
}

func (c *comparer) noise(s *sample) hostNoise {
	if n, ok := c.noises[s]; ok {
		return n
	}
	n := s.noiseOf()
	c.noises[s] = n
	return n
}

// Compare compares the candidate with the baseline: every test matched
// by id (a sweep's steps by rate too), each figure with its change, its
// interval and its word, the tests it could not match named, and the
// gate's decision when o.Gate has clauses. With no test matched it
// returns the document with ErrNoMatch (a usage error naming the tests);
// a file of redis-benchmark --csv, which holds neither histograms nor
// counts, is a usage error naming it.
func Compare(base, cand Side, o Options) (*Document, error) {
	if o.Equivalence <= 0 {
		o.Equivalence = DefaultEquivalence
	}
	if o.ErrorEquivalence <= 0 {
		o.ErrorEquivalence = DefaultErrorEquivalence
	}
	for _, in := range append(slices.Clip(base.Inputs), cand.Inputs...) {
		if in.Format == report.FormatRedisBenchmarkCSV {
			return nil, usage.Errorf("%s: redis-benchmark --csv holds no histograms and no counts to compare: diff reads pacer's JSON and memtier_benchmark's --json-out-file", in.Label)
		}
	}
	c := &comparer{o: o, level: stats.Level, trusted: map[*sample]trust{}, noises: map[*sample]hostNoise{}}
	d := &Document{Schema: Schema, Tool: report.Tool{Name: "pacer", Version: o.Version},
		Baseline: sideInfo(base), Candidate: sideInfo(cand), Level: c.level,
		EquivalencePct: 100 * o.Equivalence, ErrorEquivalencePct: o.ErrorEquivalence,
		Tests: []Test{}, Unmatched: []Unmatched{}}
	pairs, unmatched := match(base, cand)
	d.Unmatched = append(d.Unmatched, unmatched...)
	if len(pairs) == 0 {
		return d, usage.Errorf("%w: no test of the baseline matches one of the candidate (%s)", ErrNoMatch, unmatchedText(unmatched))
	}
	isPaired := paired(base, cand)
	planned, duet := 0, false // a session's rounds, when it had a budget to run more; its sides at once
	if isPaired {
		planned, duet = abPlanned(base.Inputs[0]), abDuet(base.Inputs[0])
	}
	for _, p := range pairs {
		tc := c
		dec := o.Decide[p.base.id]
		if dec != nil && dec.Level > 0 {
			at := *c
			at.level, tc = dec.Level, &at
		}
		t := tc.compareTest(p, isPaired)
		t.Decide = dec
		t.Duet = duet && t.Method == string(stats.PairedRuns)
		if planned > 0 && dec == nil && len(p.base.runs) > planned {
			// The files of a session that ran rounds until its gate
			// decided: judged at 95% as if their number had been fixed,
			// they would decide more often than its looks allowed.
			t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + sequentialNote
		}
		d.Tests = append(d.Tests, t)
	}
	if !o.Gate.IsZero() {
		g := o.Gate.Decide(d)
		d.Gate = &g
	}
	return d, nil
}

// sequentialNote is the note on a test of pacer ab --decide-within's
// files compared again by pacer diff.
const sequentialNote = "the rounds of a pacer ab session with --decide-within, which ran until its gate decided: the intervals here treat their number as fixed, which it was not, so they claim more confidence than they hold; the session's own comparison (--diff-json, tests[].decide) is at its looks' level"

func unmatchedText(un []Unmatched) string {
	var parts []string
	for _, u := range un {
		parts = append(parts, u.Test+": "+u.Why)
	}
	if len(parts) == 0 {
		return "no tests"
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more", len(parts)-4))
	}
	return strings.Join(parts, "; ")
}

// sideInfo describes a side for the document.
func sideInfo(s Side) SideInfo {
	out := SideInfo{Target: s.Target, Files: []string{}}
	tools := map[string]bool{}
	for _, in := range s.Inputs {
		out.Files = append(out.Files, safetext.Escape(in.Label))
		tool := in.Format
		if tool == report.FormatPacer {
			tool = in.Doc.Tool.Name + " " + in.Doc.Tool.Version
		}
		if tool = safetext.Escape(strings.TrimSpace(tool)); !tools[tool] {
			tools[tool] = true
			if out.Tool != "" {
				out.Tool += ", "
			}
			out.Tool += tool
		}
	}
	out.Label = strings.Join(out.Files, " ")
	if len(out.Files) > 3 {
		out.Label = fmt.Sprintf("%s … %s (%d files)", out.Files[0], out.Files[len(out.Files)-1], len(out.Files))
	}
	return out
}

// compareTest compares every figure of a matched test.
func (c *comparer) compareTest(p pair, isPaired bool) Test {
	b := p.base
	t := Test{ID: safetext.Escape(b.id), Name: safetext.Escape(b.name), Mode: b.mode, TargetRate: b.rate,
		NBaseline: len(b.runs), NCandidate: len(p.cand.runs)}
	h := &how{method: method(p, isPaired)}
	t.Method = h.method
	if h.method == string(stats.PairedRuns) {
		var left []int
		if p, left = trustedRounds(p); len(left) > 0 {
			t.RoundsLeftOut = left
			t.NBaseline, t.NCandidate = len(p.base.runs), len(p.cand.runs)
		}
	}
	switch h.method {
	case string(stats.Blocks):
		t.Note = "one run per side: the intervals come from each run's own intervals (a block bootstrap); the spread between runs is not in them"
	case string(stats.RunsOneSide):
		t.Note = "one side has a single run: the other side's spread between runs stands for both"
	case Identical:
		t.Note = "the same runs on both sides: the change is 0 exactly"
	}
	if len(t.RoundsLeftOut) > 0 {
		t.Note = roundsLeftOutNote(t.RoundsLeftOut, t.NBaseline)
	}
	qs := slices.Clone(c.o.Percentiles)
	if len(qs) == 0 {
		qs = slices.Clone(DefaultPercentiles)
	}
	qs = append(qs, c.o.Gate.percentiles()...)
	slices.Sort(qs)
	qs = slices.Compact(qs)
	all := qs
	if c.o.Spectrum {
		all = append(slices.Clone(qs), SpectrumPercentiles...)
		slices.Sort(all)
		all = slices.Compact(all)
	}
	c.blockPercentiles(p, h, all, false)
	if b, _ := c.untrusted(p.base); b == "" {
		if cd, _ := c.untrusted(p.cand); cd != "" {
			c.blockPercentiles(p, h, qs, true)
		}
	} else {
		c.blockPercentiles(p, h, qs, true)
	}
	for _, q := range qs {
		t.Figures = append(t.Figures, c.compareFigure(p, h, spec{kind: latency, q: q}))
	}
	t.Figures = append(t.Figures, c.compareFigure(p, h, spec{kind: throughput}), c.compareFigure(p, h, spec{kind: errorRate}))
	if c.o.Spectrum {
		for _, q := range all {
			t.Spectrum = append(t.Spectrum, c.compareFigure(p, h, spec{kind: latency, q: q}))
		}
	}
	return t
}

// method chooses how a matched test's intervals are found: identical
// runs compare exactly; the rounds of one pacer ab pair up; repeated runs
// on either side give the spread between runs; one run a side, its own
// intervals.
func method(p pair, isPaired bool) string {
	nb, nc := len(p.base.runs), len(p.cand.runs)
	switch {
	case nb == nc && identical(p.base.runs, p.cand.runs):
		return Identical
	case isPaired && nb == nc && nb >= 2:
		return string(stats.PairedRuns)
	case nb >= 2 && nc >= 2:
		return string(stats.Runs)
	case nb >= 2 || nc >= 2:
		return string(stats.RunsOneSide)
	}
	return string(stats.Blocks)
}

// identical reports whether two lists of runs hold the same
// measurements: the same counts, window and histograms, interval by
// interval.
func identical(a, b []*report.Test) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x.Counts != y.Counts || x.DurationS != y.DurationS || x.Histograms.Response != y.Histograms.Response ||
			len(x.Intervals) != len(y.Intervals) {
			return false
		}
		for k := range x.Intervals {
			if x.Intervals[k].Counts != y.Intervals[k].Counts || x.Intervals[k].Histograms.Response != y.Intervals[k].Histograms.Response {
				return false
			}
		}
	}
	return true
}

// blockPercentiles finds the block intervals of the percentiles qs of
// each side that has one run, on the response time or (service) the
// service time: the change's when both have one, the side's own interval
// beside a repeated side.
func (c *comparer) blockPercentiles(p pair, h *how, qs []float64, service bool) {
	k := spec{service: service}.of()
	for s, sm := range []*sample{p.base, p.cand} {
		if len(sm.runs) != 1 {
			continue
		}
		series, why := seriesOf(sm.runs[0], service)
		if why != "" {
			h.blocksWhy[s][k] = why
			continue
		}
		ivs, err := series.PercentileIntervals(qs, c.level, uint64(s)+1)
		if err != nil {
			h.blocksWhy[s][k] = tooShort(series.Len())
			continue
		}
		h.blocks[s][k] = map[float64]stats.PercentileInterval{}
		for i, q := range qs {
			ivs[i].Interval = msInterval(ivs[i].Interval)
			ivs[i].Estimate.Value /= 1e6
			h.blocks[s][k][q] = ivs[i]
		}
	}
}

func tooShort(n int) string {
	return fmt.Sprintf("%d intervals, too few for an interval of its own (at least %d: a longer run, or a shorter --interval)", n, stats.MinIntervals)
}

// msInterval converts an interval of nanoseconds to milliseconds.
func msInterval(iv stats.Interval) stats.Interval {
	iv.Estimate, iv.Lo, iv.Hi = iv.Estimate/1e6, iv.Lo/1e6, iv.Hi/1e6
	return iv
}

// seriesOf is a run's intervals of response (or service) times as the
// bootstrap reads them, or why it has none: intervals without histograms
// (memtier's per-second series).
func seriesOf(t *report.Test, service bool) (*stats.Series, string) {
	hs := make([]stats.Hist, 0, len(t.Intervals))
	for _, iv := range t.Intervals {
		enc := iv.Histograms.Response
		if service {
			enc = iv.Histograms.Service
		}
		if enc == "" {
			hs = append(hs, stats.Hist{})
			continue
		}
		h, err := histo.Decode(enc)
		if err != nil {
			return nil, "an interval's histogram does not decode: " + err.Error()
		}
		hs = append(hs, stats.HistOf(h))
	}
	s := stats.NewSeries(hs)
	if resp, _, _ := t.LatencyHistograms(); s.Count() == 0 && resp != nil && resp.TotalCount() > 0 {
		if service {
			return nil, "its intervals hold no service times"
		}
		return nil, "its intervals hold no histograms (another tool's per-second series): compare several runs per side"
	}
	return s, ""
}

// blockInterval is side s's own interval of figure f from its run's
// intervals.
func (c *comparer) blockInterval(p pair, h *how, f spec, s int) (stats.Interval, bool) {
	if f.kind == latency {
		pi, ok := h.blocks[s][f.of()][f.q]
		return pi.Interval, ok
	}
	iv, _, err := ratioOf([]*sample{p.base, p.cand}[s].runs[0], f).Interval(f.scale(), c.level, uint64(s)+11)
	return iv, err == nil
}

// blockEstimate is side s's figure f with its standard error, from its
// run's intervals.
func (c *comparer) blockEstimate(p pair, h *how, f spec, s int) (stats.Estimate, bool) {
	if f.kind == latency {
		pi, ok := h.blocks[s][f.of()][f.q]
		return pi.Estimate, ok
	}
	r := ratioOf([]*sample{p.base, p.cand}[s].runs[0], f)
	_, e, err := r.Interval(f.scale(), c.level, uint64(s)+11)
	if err != nil {
		h.blocksWhy[s][0] = tooShort(len(r.Num))
		if err == stats.ErrNotPositive {
			h.blocksWhy[s][0] = "nothing completed"
		}
		return e, false
	}
	return e, true
}

// ratioOf is a run's throughput (completed per second) or error rate
// (errors and timeouts per 100 scheduled) over its intervals.
func ratioOf(t *report.Test, f spec) stats.Ratio {
	var r stats.Ratio
	for _, iv := range t.Intervals {
		if f.kind == throughput {
			r.Num = append(r.Num, float64(iv.Completed))
			r.Den = append(r.Den, iv.DurationS)
			continue
		}
		r.Num = append(r.Num, 100*float64(iv.Errors+iv.Timeouts))
		r.Den = append(r.Den, float64(iv.Scheduled))
	}
	return r
}

// MinTrustedRounds is the fewest rounds of a pacer ab session a paired
// comparison keeps when it leaves out the rounds a side did not trust:
// with fewer (or fewer than half the session's), every round is kept and
// a side untrusted in any of them is judged as a whole (compareFigure).
const MinTrustedRounds = 3

// trustedRounds leaves out of a paired comparison the rounds in which
// either side's own verdict did not trust its run (generator_behind or
// inconclusive: the client host's doing), with the other side's run of
// that round, and returns the rounds left out (1-based). A round is a
// pair: leaving out both runs keeps the pairing, and the choice rests on
// the client's account of itself (its send lag, receive lag, hiccups),
// not on what the server answered, so it does not favour a side. A round
// that lost its target is kept, for the comparison to say so. When fewer
// than MinTrustedRounds (or than half the rounds) would remain, nothing
// is left out.
func trustedRounds(p pair) (pair, []int) {
	n := len(p.base.runs)
	if len(p.cand.runs) != n {
		return p, nil
	}
	var keep, left []int
	for i := range n {
		if untrustedRun(p.base.runs[i]) || untrustedRun(p.cand.runs[i]) {
			left = append(left, i+1)
			continue
		}
		keep = append(keep, i)
	}
	if len(left) == 0 || len(keep) < MinTrustedRounds || 2*len(keep) < n {
		return p, nil
	}
	sub := func(s *sample) *sample {
		out := &sample{name: s.name, id: s.id, mode: s.mode, rate: s.rate}
		for _, i := range keep {
			out.runs = append(out.runs, s.runs[i])
			out.where = append(out.where, s.where[i])
		}
		// The pooled test's verdict covered the rounds left out: each
		// kept run's own verdict stands for the side.
		return out
	}
	return pair{base: sub(p.base), cand: sub(p.cand)}, left
}

// untrustedRun reports whether a run's own verdict puts its numbers down
// to the client (generator_behind, inconclusive).
func untrustedRun(t *report.Test) bool {
	return t.Verdict == report.VerdictGeneratorBehind || t.Verdict == report.VerdictInconclusive
}

// roundsLeftOutNote says which rounds a paired comparison left out.
func roundsLeftOutNote(left []int, kept int) string {
	words := make([]string, len(left))
	for i, r := range left {
		words[i] = fmt.Sprint(r)
	}
	what := "round " + words[0]
	if len(left) > 1 {
		what = "rounds " + strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
	}
	return fmt.Sprintf("%s left out, with both sides' runs: a side's own verdict did not trust its run there (the client host's doing); the %d other rounds are paired", what, kept)
}
