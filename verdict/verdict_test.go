package verdict

import "testing"

func TestOutcomes(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		word string
		code int
	}{{Pass, "pass", 0}, {Fail, "fail", 3}, {Inconclusive, "inconclusive", 4}, {Error, "error", 1}} {
		if c.o.String() != c.word || c.o.ExitCode() != c.code {
			t.Errorf("%d: %s exit %d, want %s exit %d", c.o, c.o, c.o.ExitCode(), c.word, c.code)
		}
		back, err := Parse(c.word)
		if err != nil || back != c.o {
			t.Errorf("Parse(%q) = %v, %v", c.word, back, err)
		}
	}
	if _, err := Parse("ok"); err == nil {
		t.Error("Parse(ok) accepted")
	}
}

// The ranking is the exit-code table's: 130, 2, 1, 4, 3, 0.
func TestWorse(t *testing.T) {
	order := []Outcome{Pass, Fail, Inconclusive, Error}
	for i, a := range order {
		for j, b := range order {
			if got, want := Worse(a, b), order[max(i, j)]; got != want {
				t.Errorf("Worse(%s, %s) = %s, want %s", a, b, got, want)
			}
			if got, want := WorseCode(a.ExitCode(), b.ExitCode()), order[max(i, j)].ExitCode(); got != want {
				t.Errorf("WorseCode(%d, %d) = %d, want %d", a.ExitCode(), b.ExitCode(), got, want)
			}
		}
	}
	codes := []int{0, 3, 4, 1, 2, 130}
	for i, a := range codes {
		for j, b := range codes {
			if got := WorseCode(a, b); got != codes[max(i, j)] {
				t.Errorf("WorseCode(%d, %d) = %d, want %d", a, b, got, codes[max(i, j)])
			}
		}
	}
}

// TestConjunction: clauses that must all hold fail on one sure failure
// whatever the others' doubt (unlike Worse), are inconclusive on doubt
// alone and pass only when every one passes.
func TestConjunction(t *testing.T) {
	for _, c := range []struct {
		in   []Outcome
		want Outcome
	}{
		{nil, Pass},
		{[]Outcome{Pass, Pass}, Pass},
		{[]Outcome{Pass, Inconclusive}, Inconclusive},
		{[]Outcome{Inconclusive, Fail, Pass}, Fail},
		{[]Outcome{Fail, Inconclusive}, Fail},
		{[]Outcome{Fail, Error, Inconclusive}, Error},
	} {
		if got := Conjunction(c.in...); got != c.want {
			t.Errorf("Conjunction(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}
