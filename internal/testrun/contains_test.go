package testrun

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps what Errorf is given.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestContains(t *testing.T) {
	r := &recorder{TB: t}
	if !Contains(r, "alpha beta", "alpha", "beta") || len(r.errs) != 0 {
		t.Errorf("both present: %v", r.errs)
	}
	if Contains(r, "alpha beta", "alpha", "gamma", "delta") {
		t.Error("reported true with two missing")
	}
	if want := "lacks \"gamma\", \"delta\" in:\nalpha beta"; len(r.errs) != 1 || r.errs[0] != want {
		t.Errorf("errors %q, want one: %q", r.errs, want)
	}
}

func TestSection(t *testing.T) {
	text := "head\n\n  per node\n  a 1\n  b 2\n\ntail\n"
	for _, c := range []struct{ text, start, want string }{
		{text, "  per node", "  per node\n  a 1\n  b 2\n"},
		{text, "tail", "tail\n"},
		{"x\n  per node\n  a 1", "  per node", "  per node\n  a 1"},
		{text, "missing", ""},
	} {
		if got := Section(c.text, c.start); got != c.want {
			t.Errorf("Section(%q, %q) = %q, want %q", c.text, c.start, got, c.want)
		}
	}
}
