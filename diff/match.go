package diff

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// Side is one side of a comparison: the result files its runs come from.
// Several files are repeats of the same tests; a test run with --repeat
// brings its runs with it.
type Side struct {
	Inputs []report.Input
	// Target names the side's target (pacer ab), for the document.
	Target string
}

// sample is one test on one side: the tests as the files hold them and
// the runs they were made of.
type sample struct {
	name, id, mode string
	rate           *float64
	tests          []*report.Test
	runs           []*report.Test
	// where names each run for the reasons ("run 2 of b.json").
	where []string
}

// key is what matches a test across the sides: its id (else its name,
// without the rate a compare document's open loop carries), and for a
// sweep's step its rate, so that sweeps compare step by step.
func key(t *report.Test) string {
	k := "id:" + t.ID
	if t.ID == "" {
		k = "name:" + openLoopRate.ReplaceAllString(t.Name, "(open loop)")
	}
	if t.Step != nil {
		k += "@" + strconv.FormatFloat(t.Step.TargetRate, 'g', -1, 64)
	}
	return k
}

var openLoopRate = regexp.MustCompile(`\(open loop at [0-9.]+ req/s\)$`)

// collect gathers a side's tests by key, in the order of its first file
// (then the others' new ones); the k-th test of a key in a file is the
// k-th run of that key's k-th sample. A test whose mode or rate differs
// between the side's files is a mismatch of its own.
func collect(s Side) (order []string, samples map[string]*sample, bad map[string]string) {
	samples, bad = map[string]*sample{}, map[string]string{}
	for _, in := range s.Inputs {
		seen := map[string]int{}
		for i := range in.Doc.Tests {
			t := &in.Doc.Tests[i]
			k := key(t)
			seen[k]++
			k += "#" + strconv.Itoa(seen[k])
			sm, ok := samples[k]
			if !ok {
				sm = &sample{name: t.Name, id: t.ID, mode: t.Mode, rate: t.TargetRate}
				samples[k] = sm
				order = append(order, k)
			}
			if why := differs("one file", "another", sm.mode, t.Mode, sm.rate, t.TargetRate); why != "" && bad[k] == "" {
				bad[k] = "its files differ: " + why
			}
			sm.tests = append(sm.tests, t)
			label := safetext.Escape(in.Label)
			if t.Repeats != nil && len(t.Repeats.Runs) > 0 {
				for r := range t.Repeats.Runs {
					sm.runs = append(sm.runs, &t.Repeats.Runs[r])
					sm.where = append(sm.where, fmt.Sprintf("run %d of %d in %s", r+1, len(t.Repeats.Runs), label))
				}
				continue
			}
			sm.runs = append(sm.runs, t)
			sm.where = append(sm.where, label)
		}
	}
	return order, samples, bad
}

// differs says how two tests' modes or rates differ, the tests called
// a and b ("" when they do not).
func differs(a, b, modeA, modeB string, rateA, rateB *float64) string {
	if modeA != modeB {
		return fmt.Sprintf("modes differ (%s %s, %s %s)", a, modeA, b, modeB)
	}
	r := func(p *float64) string {
		if p == nil {
			return "none"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64) + " req/s"
	}
	if (rateA == nil) != (rateB == nil) || rateA != nil && *rateA != *rateB {
		return fmt.Sprintf("target rates differ (%s %s, %s %s)", a, r(rateA), b, r(rateB))
	}
	return ""
}

// pair is a test matched on both sides.
type pair struct {
	base, cand *sample
}

// match lines up the sides' tests and names the ones it cannot compare.
func match(base, cand Side) ([]pair, []Unmatched) {
	bo, bs, bbad := collect(base)
	co, cs, cbad := collect(cand)
	var out []pair
	var un []Unmatched
	name := func(s *sample) string { return safetext.Escape(s.name) }
	for _, k := range bo {
		b := bs[k]
		c, ok := cs[k]
		switch {
		case !ok:
			un = append(un, Unmatched{Test: name(b), Why: "only in the baseline"})
		case bbad[k] != "":
			un = append(un, Unmatched{Test: name(b), Why: "the baseline: " + bbad[k]})
		case cbad[k] != "":
			un = append(un, Unmatched{Test: name(b), Why: "the candidate: " + cbad[k]})
		default:
			if why := differs("baseline", "candidate", b.mode, c.mode, b.rate, c.rate); why != "" {
				un = append(un, Unmatched{Test: name(b), Why: why})
				continue
			}
			out = append(out, pair{base: b, cand: c})
		}
	}
	for _, k := range co {
		if _, ok := bs[k]; !ok {
			un = append(un, Unmatched{Test: name(cs[k]), Why: "only in the candidate"})
		}
	}
	return out, un
}

// abSession returns the pacer ab session and side a document was written
// by ("" when it was not).
func abSession(in report.Input) (session, side string) {
	ab, ok := in.Doc.Config["ab"].(map[string]any)
	if !ok {
		return "", ""
	}
	session, _ = ab["session"].(string)
	side, _ = ab["side"].(string)
	return session, side
}

// abPlanned is the planned rounds of the pacer ab session a file is a
// side of when it had a budget (--decide-within) to run more; 0 when it
// had none, or is no session's.
func abPlanned(in report.Input) int {
	ab, ok := in.Doc.Config["ab"].(map[string]any)
	if !ok {
		return 0
	}
	budget, _ := ab["decide_within_s"].(float64)
	rounds, _ := ab["rounds"].(float64)
	if budget <= 0 {
		return 0
	}
	return max(int(rounds), 1)
}

// paired reports whether the sides are the two sides of one pacer ab:
// their rounds were run side by side, so the k-th run of each is a pair.
func paired(base, cand Side) bool {
	if len(base.Inputs) != 1 || len(cand.Inputs) != 1 {
		return false
	}
	sb, ab := abSession(base.Inputs[0])
	sc, ac := abSession(cand.Inputs[0])
	return sb != "" && sb == sc && ab != ac
}

// abDuet says the file is a side of a pacer ab session whose rounds ran
// both sides at once (--duet).
func abDuet(in report.Input) bool {
	ab, ok := in.Doc.Config["ab"].(map[string]any)
	if !ok {
		return false
	}
	duet, _ := ab["duet"].(bool)
	return duet
}
