package testrun

import (
	"fmt"
	"strings"
	"testing"
)

// Contains fails the test, without stopping it, when out lacks any of
// wants: one error naming every missing string, with out shown once.
// It reports whether out held them all.
func Contains(t testing.TB, out string, wants ...string) bool {
	t.Helper()
	var missing []string
	for _, w := range wants {
		if !strings.Contains(out, w) {
			missing = append(missing, fmt.Sprintf("%q", w))
		}
	}
	if len(missing) > 0 {
		t.Errorf("lacks %s in:\n%s", strings.Join(missing, ", "), out)
	}
	return len(missing) == 0
}

// Section is the paragraph of a text report that starts at the first
// occurrence of start: up to the blank line that ends it (its last
// newline kept) or the end of text; "" when text lacks start.
func Section(text, start string) string {
	i := strings.Index(text, start)
	if i < 0 {
		return ""
	}
	s := text[i:]
	if end := strings.Index(s, "\n\n"); end >= 0 {
		s = s[:end+1]
	}
	return s
}
