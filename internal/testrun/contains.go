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
