package report

import (
	"encoding/json"
	"fmt"
	"math"
)

// This file holds pacer diff's document, pacer.diff/v1: what pacer diff
// and pacer ab concluded about a baseline and a candidate, per test and
// figure, with the intervals and the method they rest on. Package diff
// computes it; diff_text.go, diff_plot.go and diff_html.go draw it, from
// a comparison just made or from a document read back (pacer report
// diff.json), through the same code.

// DiffSchema identifies pacer diff's JSON document.
const DiffSchema = "pacer.diff/v1"

// Diff is the pacer.diff/v1 document. Field names are a contract (see
// docs/diff.md, "JSON").
type Diff struct {
	Schema    string   `json:"schema"`
	Tool      Tool     `json:"tool"`
	Baseline  DiffSide `json:"baseline"`
	Candidate DiffSide `json:"candidate"`
	// Level is the intervals' confidence (0.95).
	Level float64 `json:"level"`
	// EquivalencePct is --equivalence: latencies and throughput are the
	// same when their change's whole interval lies within ± it (%).
	EquivalencePct float64 `json:"equivalence_pct"`
	// ErrorEquivalencePct is --equivalence-errors: the error rates are
	// the same within ± it, in percentage points of the scheduled
	// requests.
	ErrorEquivalencePct float64    `json:"error_equivalence_pct"`
	Tests               []DiffTest `json:"tests"`
	// Unmatched are the tests not compared, each with why.
	Unmatched []DiffUnmatched `json:"unmatched"`
	// Gate is --max-regression's decision (absent without it).
	Gate *DiffGate `json:"gate,omitempty"`
}

// DiffSide says what one side of a comparison was read from.
type DiffSide struct {
	Label string `json:"label"`
	// Files are the result files the side's runs come from (the labels
	// they go by), several when they are repeats.
	Files []string `json:"files"`
	// Tool is what wrote them: "pacer 0.1.0", or another tool's format.
	Tool string `json:"tool"`
	// Target is, for pacer ab, the side's target (its password masked).
	Target string `json:"target,omitempty"`
}

// DiffTest is one test compared.
type DiffTest struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Mode       string   `json:"mode"`
	TargetRate *float64 `json:"target_rate"`
	// Method is how its intervals were found: runs, paired-runs,
	// runs-one-side, blocks (one run per side) or identical (the same
	// runs on both sides).
	Method     string `json:"method"`
	NBaseline  int    `json:"n_baseline"`
	NCandidate int    `json:"n_candidate"`
	// Note says what the method leaves out, when something.
	Note    string       `json:"note,omitempty"`
	Figures []DiffFigure `json:"figures"`
	// Spectrum is the response time at more percentiles, for the
	// pictures (word and why included).
	Spectrum []DiffFigure `json:"spectrum,omitempty"`
}

// DiffFigure is one figure of a test on both sides: its value on each
// (with the side's own interval), the change and its interval, and the
// word. A figure is a percentile of the response time (ms; the latency
// from the send in closed mode), "throughput" (completed requests per
// second) or "errors" (errors and timeouts, % of the scheduled
// requests). Intervals are [lo, hi]; an end no data bound is null, and a
// whole interval is null when there is none.
type DiffFigure struct {
	Figure string `json:"figure"`
	// P is the percentile of a latency figure (0 for the others).
	P    float64 `json:"p,omitempty"`
	Unit string  `json:"unit"`
	// Baseline and Candidate are each side's figure: its own with one
	// run, the geometric mean of its runs' with several (the arithmetic
	// mean for errors).
	Baseline          *float64   `json:"baseline"`
	Candidate         *float64   `json:"candidate"`
	BaselineInterval  []*float64 `json:"baseline_interval"`
	CandidateInterval []*float64 `json:"candidate_interval"`
	// Change is candidate − baseline in the unit, Interval its interval
	// there; ChangePct and IntervalPct are the same relative to the
	// baseline, in % (null for errors, which change absolutely).
	Change      *float64   `json:"change"`
	ChangePct   *float64   `json:"change_pct"`
	Interval    []*float64 `json:"interval"`
	IntervalPct []*float64 `json:"interval_pct"`
	// Word is worse, better, same or cannot tell; Why says why it
	// cannot tell.
	Word       string `json:"word"`
	Why        string `json:"why,omitempty"`
	Method     string `json:"method"`
	NBaseline  int    `json:"n_baseline"`
	NCandidate int    `json:"n_candidate"`
	// Untrusted names, for a side whose own verdict says its numbers
	// cannot be trusted (generator_behind, inconclusive, target_lost),
	// that verdict; Noisy, for a side whose client host's noise at this
	// percentile was a material share of it, that noise; TooFew, too few
	// samples beyond the percentile on a side. Empty when not so.
	BaselineUntrusted  string `json:"baseline_untrusted,omitempty"`
	CandidateUntrusted string `json:"candidate_untrusted,omitempty"`
	BaselineNoisy      string `json:"baseline_noisy,omitempty"`
	CandidateNoisy     string `json:"candidate_noisy,omitempty"`
	TooFew             string `json:"too_few,omitempty"`
	// NoiseMs is, for a percentile, what each side's client host may have
	// added to it (host hiccups + receive lag there, ms); absent when not
	// measured.
	BaselineNoiseMs  *float64 `json:"baseline_noise_ms,omitempty"`
	CandidateNoiseMs *float64 `json:"candidate_noise_ms,omitempty"`
	// Service is, for a percentile when a side is untrusted by its own
	// verdict, the same comparison of the service time (the server's
	// side, which the generator's lateness does not touch): the word
	// stands only where it says the same.
	Service *DiffService `json:"service,omitempty"`
}

// DiffService is a percentile's change on service time.
type DiffService struct {
	ChangePct   *float64   `json:"change_pct"`
	IntervalPct []*float64 `json:"interval_pct"`
	Word        string     `json:"word"`
	Why         string     `json:"why,omitempty"`
}

// Paired reports whether the figure's change comes from interleaved
// rounds (pacer ab), whose pairing puts the client host's noise on both
// sides alike.
func (f DiffFigure) Paired() bool { return f.Method == "paired-runs" }

// Relative reports whether the figure changes relatively (latencies,
// throughput) rather than absolutely (errors).
func (f DiffFigure) Relative() bool { return f.Unit != "%" }

// DiffUnmatched is a test that was not compared, and why: only on one
// side, or its mode or rate differs between the sides.
type DiffUnmatched struct {
	Test string `json:"test"`
	Why  string `json:"why"`
}

// DiffGate is what --max-regression decided: pass (every clause surely
// within its allowance), fail (some clause surely beyond it) or
// inconclusive, with the line that says why, and each clause's own
// outcome on each test.
type DiffGate struct {
	Spec    string       `json:"spec"`
	Outcome string       `json:"outcome"`
	Reason  string       `json:"reason"`
	Clauses []DiffClause `json:"clauses"`
}

// DiffClause is one clause of the gate on one test.
type DiffClause struct {
	Test    string `json:"test"`
	Clause  string `json:"clause"`
	Outcome string `json:"outcome"`
	Why     string `json:"why"`
}

// Marshal renders the document as indented JSON with a final newline.
func (d *Diff) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// IsDiff reports whether data is a pacer.diff/v1 document (by its
// schema), so that pacer report can draw one.
func IsDiff(data []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(data, &head) == nil && head.Schema == DiffSchema
}

// ReadDiff decodes a pacer.diff/v1 document and checks what its drawing
// relies on: its schema, words and intervals of two ends.
func ReadDiff(data []byte) (*Diff, error) {
	var d Diff
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("not a pacer diff: %w", err)
	}
	if d.Schema != DiffSchema {
		return nil, fmt.Errorf("not a pacer diff: schema %q, want %q", d.Schema, DiffSchema)
	}
	for i := range d.Tests {
		t := &d.Tests[i]
		t.Name, t.ID, t.Note = cutText(t.Name), cutText(t.ID), cutText(t.Note)
		for _, list := range [][]DiffFigure{t.Figures, t.Spectrum} {
			for j := range list {
				if err := checkDiffFigure(&list[j]); err != nil {
					return nil, fmt.Errorf("test %q, %s: %w", t.Name, list[j].Figure, err)
				}
			}
		}
	}
	return &d, nil
}

// checkDiffFigure refuses a figure the renderers cannot draw.
func checkDiffFigure(f *DiffFigure) error {
	switch f.Word {
	case "worse", "better", "same", "cannot tell":
	default:
		return fmt.Errorf("word %q: want worse, better, same or cannot tell", f.Word)
	}
	for _, iv := range [][]*float64{f.BaselineInterval, f.CandidateInterval, f.Interval, f.IntervalPct} {
		if iv != nil && len(iv) != 2 {
			return fmt.Errorf("an interval of %d ends, want 2", len(iv))
		}
	}
	for _, v := range []*float64{f.Baseline, f.Candidate, f.Change, f.ChangePct} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return fmt.Errorf("not a number")
		}
	}
	f.Figure, f.Why = cutText(f.Figure), cutText(f.Why)
	return nil
}

// DiffEnds makes [lo, hi] an interval of the document: an infinite or
// undefined end is null.
func DiffEnds(lo, hi float64) []*float64 {
	end := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return []*float64{end(lo), end(hi)}
}

// DiffValue is v as the document keeps a figure: null when not a number.
func DiffValue(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
