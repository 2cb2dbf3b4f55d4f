package diff

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/pacer-load/pacer/report"
)

// This file holds pacer diff's document, pacer.diff/v1: what pacer diff
// and pacer ab concluded about a baseline and a candidate, per test and
// figure, with the intervals and the method they rest on. Compare
// computes it; report/text and report/plots draw it, from
// a comparison just made or from a document read back (pacer report
// diff.json), through the same code.

// Schema identifies pacer diff's JSON document.
const Schema = "pacer.diff/v1"

// Document is the pacer.diff/v1 document. Field names are a contract (see
// docs/diff.md, "JSON").
type Document struct {
	Schema    string      `json:"schema"`
	Tool      report.Tool `json:"tool"`
	Baseline  SideInfo    `json:"baseline"`
	Candidate SideInfo    `json:"candidate"`
	// Level is the intervals' confidence (0.95), but for a test of
	// pacer ab --decide-within, whose own is Test.Decide.Level.
	Level float64 `json:"level"`
	// EquivalencePct is --equivalence: latencies and throughput are the
	// same when their change's whole interval lies within ± it (%).
	EquivalencePct float64 `json:"equivalence_pct"`
	// ErrorEquivalencePct is --equivalence-errors: the error rates are
	// the same within ± it, in percentage points of the scheduled
	// requests.
	ErrorEquivalencePct float64 `json:"error_equivalence_pct"`
	Tests               []Test  `json:"tests"`
	// Unmatched are the tests not compared, each with why.
	Unmatched []Unmatched `json:"unmatched"`
	// Gate is --max-regression's decision (absent without it).
	Gate *GateResult `json:"gate,omitempty"`
}

// SideInfo says what one side of a comparison was read from.
type SideInfo struct {
	Label string `json:"label"`
	// Files are the result files the side's runs come from (the labels
	// they go by), several when they are repeats.
	Files []string `json:"files"`
	// Tool is what wrote them: "pacer 0.1.0", or another tool's format.
	Tool string `json:"tool"`
	// Target is, for pacer ab, the side's target (its password masked).
	Target string `json:"target,omitempty"`
}

// Test is one test compared.
type Test struct {
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
	Note string `json:"note,omitempty"`
	// Duet says the paired rounds ran both sides at once (pacer ab
	// --duet) rather than one after the other; absent otherwise.
	Duet bool `json:"duet,omitempty"`
	// RoundsLeftOut are the rounds (1-based) of a pacer ab session left
	// out of the paired comparison because a side's own verdict did not
	// trust its run of that round (see Note); absent when none.
	RoundsLeftOut []int `json:"rounds_left_out,omitempty"`
	// Decide is how a pacer ab session given a budget (--decide-within)
	// used it for this test; its intervals are then at Decide.Level, not
	// the document's. Absent otherwise.
	Decide  *Decide  `json:"decide,omitempty"`
	Figures []Figure `json:"figures"`
	// Spectrum is the response time at more percentiles, for the
	// pictures (word and why included).
	Spectrum []Figure `json:"spectrum,omitempty"`
}

// Decide is how a pacer ab session with --decide-within used its budget
// on a test: after its planned rounds it looked once (the ordinary 95%
// rule), and while the gate could not decide it ran two more rounds at a
// time and looked again, each later look at Bonferroni's level for the
// looks the budget held, until the gate decided or the budget ran out.
type Decide struct {
	BudgetS float64 `json:"budget_s"`
	// Rounds is how many rounds the test ran, PlannedRounds how many
	// --rounds asked for.
	Rounds        int `json:"rounds"`
	PlannedRounds int `json:"planned_rounds"`
	// Looks taken of PlannedLooks (the first after the planned rounds,
	// one after every two rounds more the budget held, as the first look
	// foresaw them from the time the rounds had taken).
	Looks        int `json:"looks"`
	PlannedLooks int `json:"planned_looks"`
	// Level is the last look's two-sided confidence, which the test's
	// intervals are at: 0.95 at the first look, stats.Bonferroni of 95%
	// over PlannedLooks at a later one.
	Level float64 `json:"level"`
	// Decided: the gate decided at the last look. By names the rule of
	// that look: "first look" or "sequential"; "budget" when the budget
	// ran out undecided.
	Decided bool   `json:"decided"`
	By      string `json:"by"`
}

// Figure is one figure of a test on both sides: its value on each
// (with the side's own interval), the change and its interval, and the
// word. A figure is a percentile of the response time (ms; the latency
// from the send in closed mode), "throughput" (completed requests per
// second) or "errors" (errors and timeouts, % of the scheduled
// requests). Intervals are [lo, hi]; an end no data bound is null, and a
// whole interval is null when there is none.
type Figure struct {
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
	Service *Service `json:"service,omitempty"`
}

// Service is a percentile's change on service time.
type Service struct {
	ChangePct   *float64   `json:"change_pct"`
	IntervalPct []*float64 `json:"interval_pct"`
	Word        string     `json:"word"`
	Why         string     `json:"why,omitempty"`
}

// Paired reports whether the figure's change comes from interleaved
// rounds (pacer ab), whose pairing puts the client host's noise on both
// sides alike.
func (f Figure) Paired() bool { return f.Method == "paired-runs" }

// Relative reports whether the figure changes relatively (latencies,
// throughput) rather than absolutely (errors).
func (f Figure) Relative() bool { return f.Unit != "%" }

// Unmatched is a test that was not compared, and why: only on one
// side, or its mode or rate differs between the sides.
type Unmatched struct {
	Test string `json:"test"`
	Why  string `json:"why"`
}

// GateResult is what --max-regression decided: pass (every clause surely
// within its allowance), fail (some clause surely beyond it) or
// inconclusive, with the line that says why, and each clause's own
// outcome on each test.
type GateResult struct {
	Spec    string         `json:"spec"`
	Outcome string         `json:"outcome"`
	Reason  string         `json:"reason"`
	Clauses []ClauseResult `json:"clauses"`
}

// ClauseResult is one clause of the gate on one test.
type ClauseResult struct {
	Test    string `json:"test"`
	Clause  string `json:"clause"`
	Outcome string `json:"outcome"`
	Why     string `json:"why"`
}

// Marshal renders the document as indented JSON with a final newline.
func (d *Document) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// IsDocument reports whether data is a pacer.diff/v1 document (by its
// schema), so that pacer report can draw one.
func IsDocument(data []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(data, &head) == nil && head.Schema == Schema
}

// Read decodes a pacer.diff/v1 document and checks what its drawing
// relies on: its schema, words and intervals of two ends.
func Read(data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("not a pacer diff: %w", err)
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("not a pacer diff: schema %q, want %q", d.Schema, Schema)
	}
	for i := range d.Tests {
		t := &d.Tests[i]
		t.Name, t.ID, t.Note = report.CutText(t.Name), report.CutText(t.ID), report.CutText(t.Note)
		for _, list := range [][]Figure{t.Figures, t.Spectrum} {
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
func checkDiffFigure(f *Figure) error {
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
	f.Figure, f.Why = report.CutText(f.Figure), report.CutText(f.Why)
	return nil
}

// Ends makes [lo, hi] an interval of the document: an infinite or
// undefined end is null.
func Ends(lo, hi float64) []*float64 {
	end := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return []*float64{end(lo), end(hi)}
}

// Value is v as the document keeps a figure: null when not a number.
func Value(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ReadFile reads the pacer.diff/v1 document in the file at path: nil and
// no error when path is not a regular file holding one (not a diff, too
// large, unreadable: a reader of results says what is wrong with it), an
// error when it is one and does not check.
func ReadFile(path string) (*Document, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > report.MaxDocumentSize {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil || !IsDocument(data) {
		return nil, nil
	}
	return Read(data)
}
