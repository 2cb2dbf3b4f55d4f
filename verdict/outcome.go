package verdict

import (
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// Outcomes of documents read back (pacer report) or merged (pacer merge):
// what they mean for an exit code, from the verdicts they carry, so that a
// workflow can gate on a report or a merge as on the run itself.

// Of is a test's outcome from the verdict and SLO it carries (as Judge
// sets them; a document written before tests carried "outcome" has them
// too): target_lost is Error, generator_behind and inconclusive
// Inconclusive, a violated SLO (the server's) Fail, anything else Pass.
func Of(t *report.Test) Outcome {
	switch t.Verdict {
	case report.VerdictTargetLost:
		return Error
	case report.VerdictGeneratorBehind, report.VerdictInconclusive:
		return Inconclusive
	}
	if t.SLO != nil && !t.SLO.Pass {
		return Fail
	}
	return Pass
}

// OfDocument is the worst outcome of a document's tests, with one
// line for each test that makes it ("GET: target lost: why", escaped). A
// sweep's steps beyond the sustainable rate fail by design: a sweep is
// Error when a step (not stopped by --abort-after) lost its target,
// Inconclusive when it did not converge, Pass otherwise.
func OfDocument(d *report.Document) (Outcome, []string) {
	out := Pass
	var lines []string
	note := func(t *report.Test, o Outcome, what, why string) {
		out = Worse(out, o)
		lines = append(lines, safetext.Escape(t.Name)+": "+what+": "+safetext.Escape(why))
	}
	for i := range d.Tests {
		t := &d.Tests[i]
		o := Of(t)
		if d.Sweep != nil && o != Error || t.Step != nil && t.Step.Aborted {
			continue
		}
		switch o {
		case Error:
			note(t, o, "error: target lost", t.VerdictReason)
		case Inconclusive:
			note(t, o, "inconclusive", t.VerdictReason)
		case Fail:
			why := t.VerdictReason
			if t.SLO != nil {
				why = t.SLO.Line()
			}
			note(t, o, "fail", why)
		}
	}
	if s := d.Sweep; s != nil && !s.Converged {
		out = Worse(out, Inconclusive)
		lines = append(lines, "sweep: inconclusive: not converged: "+safetext.Escape(s.Reason))
	}
	return out, lines
}
