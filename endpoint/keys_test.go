package endpoint

import "testing"

// A container command's keys are found by its subcommand's entry: OBJECT
// ENCODING's key is its third argument, not the subcommand.
func TestKeySpecOfSubcommand(t *testing.T) {
	for _, c := range []struct {
		args  []string
		first int
	}{
		{[]string{"OBJECT", "ENCODING", "k"}, 2},
		{[]string{"object", "freq", "k"}, 2},
		{[]string{"GET", "k"}, 1},
		{[]string{"MEMORY", "USAGE", "k"}, 2},
	} {
		spec, ok := KeySpecOf(c.args)
		if !ok || spec.First != c.first {
			t.Errorf("%q: first key at %d (%v), want %d", c.args, spec.First, ok, c.first)
		}
	}
}
