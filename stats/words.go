package stats

import (
	"fmt"
	"math"
)

// Word is what a comparison concludes about one figure.
type Word string

const (
	// Worse: the interval excludes no change, and the change is beyond
	// the equivalence margin in the worse direction.
	Worse Word = "worse"
	// Better: the same in the better direction.
	Better Word = "better"
	// Same: the whole interval lies within ± the equivalence margin: an
	// equivalence test, which "no evidence of a change" is not.
	Same Word = "same"
	// CannotTell: neither (the interval is too wide, or it places a small
	// change neither inside nor beyond the margin).
	CannotTell Word = "cannot tell"
)

// Direction says which way a figure gets worse.
type Direction int8

const (
	// HigherIsWorse: latencies, error shares.
	HigherIsWorse Direction = 1
	// LowerIsWorse: throughput.
	LowerIsWorse Direction = -1
)

// Classify gives c its word under an equivalence margin eq (a fraction
// for Relative changes, 0.05 for ±5%; the figure's unit for Absolute
// ones) and says why in a short phrase when it cannot tell.
func (c Change) Classify(eq float64, dir Direction) (Word, string) {
	lo, hi, est := c.Lo, c.Hi, c.Estimate
	if dir == LowerIsWorse {
		lo, hi, est = -hi, -lo, -est
	}
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return CannotTell, "no interval"
	case lo >= -eq && hi <= eq:
		return Same, ""
	case lo > 0 && est > eq:
		return Worse, ""
	case hi < 0 && est < -eq:
		return Better, ""
	case lo > 0 || hi < 0:
		return CannotTell, fmt.Sprintf("a change within the ±%s margin that the interval does not place inside it", c.marginText(eq))
	}
	return CannotTell, fmt.Sprintf("the interval is wider than the ±%s margin and includes no change", c.marginText(eq))
}

func (c Change) marginText(eq float64) string {
	if c.Scale == Relative {
		return fmt.Sprintf("%g%%", 100*eq)
	}
	return fmt.Sprintf("%g", eq)
}

// Verdict is what a regression allowance concludes about one figure.
type Verdict int8

const (
	// Within: the candidate is surely not worse beyond the allowance (the
	// interval's worse end is within it).
	Within Verdict = iota
	// Unsure: the interval straddles the allowance.
	Unsure
	// Exceeded: the candidate is surely worse beyond the allowance (the
	// interval's better end is beyond it).
	Exceeded
)

func (v Verdict) String() string {
	switch v {
	case Exceeded:
		return "exceeded"
	case Unsure:
		return "unsure"
	}
	return "within"
}

// Against holds c to a regression allowance (a fraction for Relative
// figures, the unit for Absolute ones): how much worse the candidate may
// be.
func (c Change) Against(allowance float64, dir Direction) Verdict {
	lo, hi := c.Lo, c.Hi
	if dir == LowerIsWorse {
		lo, hi = -hi, -lo
	}
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Unsure
	case lo > allowance:
		return Exceeded
	case hi <= allowance:
		return Within
	}
	return Unsure
}

// Bonferroni is the level of each of looks looks at the data that keeps
// the chance of any false conclusion among them under 1 − level: a rule
// that looks again while it cannot decide spends its error budget across
// its looks, so that looking until the answer suits is not what it does.
func Bonferroni(level float64, looks int) float64 {
	if looks <= 1 {
		return level
	}
	return 1 - (1-level)/float64(looks)
}
