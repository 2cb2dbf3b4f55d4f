package verdict

import "fmt"

// An Ending gathers how a command's measurements ended, as they end, and
// decides the one exit they make together, in the order scripts rely on
// (docs/ci.md): an interruption first (ExitInterrupted, whatever the
// partial results say), then an error that stopped the work (ExitError),
// then the worst of the outcomes judged (Worse: error, inconclusive, fail,
// pass). The zero Ending is a pass.
type Ending struct {
	// Interrupted: the work was stopped before its end (Ctrl-C, a signal).
	Interrupted bool
	// Err stopped the work before it was all judged.
	Err   error
	worst Outcome
}

// Judged takes a test's judgement into the ending and returns the line
// that says, in the outcome's word, why the test did not pass, "" when it
// passed: "GET: error: target lost: …", "GET: inconclusive: …" (naming the
// figure), "GET: fail: …" (the server's evidence).
func (e *Ending) Judged(name string, j Judgement) string {
	e.Add(j.Outcome)
	switch j.Outcome {
	case Error:
		return fmt.Sprintf("%s: %s: target lost: %s", name, j.Outcome, j.Reason)
	case Inconclusive, Fail:
		return fmt.Sprintf("%s: %s: %s", name, j.Outcome, j.Reason)
	}
	return ""
}

// Add takes an outcome decided elsewhere (a sweep's) into the ending.
func (e *Ending) Add(o Outcome) { e.worst = Worse(e.worst, o) }

// Outcome is the worst outcome taken so far (Pass when none).
func (e *Ending) Outcome() Outcome { return e.worst }

// Code is the exit the ending decides.
func (e *Ending) Code() int {
	switch {
	case e.Interrupted:
		return ExitInterrupted
	case e.Err != nil:
		return ExitError
	}
	return e.worst.ExitCode()
}
