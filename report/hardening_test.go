package report

import (
	"testing"
)

// The reproductions of the adversarial test, rendered through every
// output of the package.

func TestParseSLORejectsNonFiniteAndNegative(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"errors<NaN%", "errors<NaN", "errors<nan%", "unsent<NaN%", "errors<Inf%", "errors<+Inf", "errors<-Inf%",
		"errors<-1%", "unsent<-0.5", "p99<NaNms", "p99<-5ms", "p99<Infms", "rate>NaN", "rate>-5", "rate>Inf",
	} {
		if _, err := parseSLO(s); err == nil {
			t.Errorf("parseSLO(%q) accepted", s)
		}
	}
}
