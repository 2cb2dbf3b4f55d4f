package report

import (
	"github.com/pacer-load/pacer/internal/safetext"
)

// Outcomes of documents read back (pacer report) or merged (pacer merge):
// what they mean for an exit code, from the verdicts they carry, so that a
// workflow can gate on a report or a merge as on the run itself.

// outcomeOf is a test's outcome from the verdict and SLO it carries (as
// Judge sets them; a document written before tests carried "outcome"
// has them too): target_lost is Failed, generator_behind and
// inconclusive Untrusted, a violated SLO (the server's) Violated,
// anything else Trusted.
func outcomeOf(t *Test) Outcome {
	switch t.Verdict {
	case VerdictTargetLost:
		return Failed
	case VerdictGeneratorBehind, VerdictInconclusive:
		return Untrusted
	}
	if t.SLO != nil && !t.SLO.Pass {
		return Violated
	}
	return Trusted
}

// DocumentOutcome is the worst outcome of a document's tests, with one
// line for each test that makes it ("GET: target lost: why", escaped). A
// sweep's steps beyond the sustainable rate fail by design: a sweep is
// Failed when a step (not stopped by --abort-after) lost its target,
// Untrusted when it did not converge, Trusted otherwise.
func DocumentOutcome(d *Document) (Outcome, []string) {
	out := Trusted
	var lines []string
	note := func(t *Test, o Outcome, what, why string) {
		out = Worse(out, o)
		lines = append(lines, safetext.Escape(t.Name)+": "+what+": "+safetext.Escape(why))
	}
	for i := range d.Tests {
		t := &d.Tests[i]
		o := outcomeOf(t)
		if d.Sweep != nil && o != Failed || t.Step != nil && t.Step.Aborted {
			continue
		}
		switch o {
		case Failed:
			note(t, o, "error: target lost", t.VerdictReason)
		case Untrusted:
			note(t, o, "inconclusive", t.VerdictReason)
		case Violated:
			why := t.VerdictReason
			if t.SLO != nil {
				why = t.SLO.Line()
			}
			note(t, o, "fail", why)
		}
	}
	if s := d.Sweep; s != nil && !s.Converged {
		out = Worse(out, Untrusted)
		lines = append(lines, "sweep: inconclusive: not converged: "+safetext.Escape(s.Reason))
	}
	return out, lines
}
