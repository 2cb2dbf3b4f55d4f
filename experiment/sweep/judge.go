package sweep

import (
	"github.com/pacer-load/pacer/verdict"
)

// A sweep gathers the facts of each step (its test and the trust rule's
// judgement, whether it was aborted, its percentile intervals, its
// samples, its trend) and leaves the judging to package verdict:
// verdict.Step decides a step, verdict.OpenSweep and verdict.ClosedSweep
// conclude a sweep.

// judgeAgain judges p, a rate measured before (earlier), by its best
// measurement (verdict.Remeasured), and records which earlier points it
// was judged with.
func judgeAgain(p *openPoint, earlier []*openPoint, index map[*openPoint]int) {
	prev := make([]verdict.StepJudgement, len(earlier))
	for k, q := range earlier {
		p.judgedWith = append(p.judgedWith, index[q])
		prev[k] = q.StepJudgement
	}
	p.StepJudgement = verdict.Remeasured(p.StepJudgement, prev...)
}

// openOutcome is an open sweep's outcome from its points
// (verdict.OpenSweep): best is the sustainable rate (0: none).
func openOutcome(points []*openPoint, sloSet bool, best float64, interrupted bool) (verdict.Outcome, []string) {
	steps := make([]verdict.SweepStep, len(points))
	for i, p := range points {
		steps[i] = verdict.SweepStep{Test: p.test, Rate: p.rate, Aborted: p.aborted, StepJudgement: p.StepJudgement}
	}
	return verdict.OpenSweep(steps, sloSet, best, interrupted)
}
