// Package verdict owns every judgement of a measurement: the trust rule
// (Judge: facts and an SLO into a verdict and an outcome), the
// sequential rule of a budget to decide in, the SLO's parsing and
// checking, a sweep step's decision (Step) and a sweep's conclusion
// (OpenSweep, ClosedSweep), and what a document read back or merged
// concludes. It names
// the outcomes, one word per state, and derives the exit code from them
// in one place: a run, a repeat, a sweep step or search, a comparison, a
// replay, a merge and a diff all end in one of these outcomes, and a
// command's exit code is the worst of its outcomes. It reads and writes
// report's tests (the result store), which never imports it.
package verdict

import "fmt"

// Outcome is what a judged measurement concludes.
type Outcome int8

const (
	// Pass: the result stands (exit 0). With an SLO, the SLO was met on a
	// fully delivered load; with a regression allowance, the candidate is
	// surely not worse beyond it.
	Pass Outcome = iota
	// Fail: the server missed, and it is the server's doing (exit 3): an
	// SLO missed on the server's side, or a candidate surely worse beyond
	// its allowance.
	Fail
	// Inconclusive: pacer cannot decide (exit 4): its own lateness, the
	// client host's noise or too few samples could change the
	// conclusion. The reason names the figure.
	Inconclusive
	// Error: the measurement failed (exit 1): the target was lost,
	// nothing completed, a file could not be written.
	Error
)

// Exit codes. Usage and Interrupted are not outcomes of a measurement
// but end a command all the same.
const (
	ExitPass         = 0
	ExitError        = 1
	ExitUsage        = 2
	ExitFail         = 3
	ExitInconclusive = 4
	ExitInterrupted  = 130
	ExitQuit         = 131
)

// String is the outcome's one word, as text, JSON and docs spell it.
func (o Outcome) String() string {
	switch o {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Inconclusive:
		return "inconclusive"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Outcome(%d)", int8(o))
}

// MarshalText writes the outcome's word.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome's word.
func (o *Outcome) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// Parse reads an outcome's word.
func Parse(s string) (Outcome, error) {
	for _, o := range []Outcome{Pass, Fail, Inconclusive, Error} {
		if o.String() == s {
			return o, nil
		}
	}
	return Pass, fmt.Errorf("unknown outcome %q (want pass, fail, inconclusive or error)", s)
}

// ExitCode is the outcome's exit code: 0, 3, 4 or 1.
func (o Outcome) ExitCode() int {
	switch o {
	case Fail:
		return ExitFail
	case Inconclusive:
		return ExitInconclusive
	case Error:
		return ExitError
	}
	return ExitPass
}

// Worse returns the outcome that matters more when several apply: Error,
// then Inconclusive, then Fail, then Pass (a run that cannot be trusted
// says nothing of the server, so it outranks a failure).
func Worse(a, b Outcome) Outcome { return max(a, b) }

// Conjunction is the outcome of clauses that must all hold, each judged
// on its own (a regression gate's): Error when one could not be judged,
// else Fail when one surely fails (the others' doubt cannot save it),
// else Inconclusive when one cannot be told, else Pass. Worse ranks
// doubt above a failure because there the doubt is whether the failure
// itself is the server's; here each clause's doubt is its own, and a sure
// failure of another clause stands. No outcome is Pass.
func Conjunction(clauses ...Outcome) Outcome {
	out := Pass
	rank := func(o Outcome) int {
		switch o {
		case Inconclusive:
			return 1
		case Fail:
			return 2
		case Error:
			return 3
		}
		return 0
	}
	for _, o := range clauses {
		if rank(o) > rank(out) {
			out = o
		}
	}
	return out
}

// WorseCode returns the exit code that matters more of two: interrupted
// (130), then usage (2), then 1, 4, 3 and 0, as Worse ranks outcomes.
func WorseCode(a, b int) int {
	rank := func(c int) int {
		switch c {
		case ExitPass:
			return 0
		case ExitFail:
			return 1
		case ExitInconclusive:
			return 2
		case ExitError:
			return 3
		case ExitUsage:
			return 4
		case ExitInterrupted:
			return 5
		}
		return 6 // ExitQuit and anything unknown end a command at once
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
