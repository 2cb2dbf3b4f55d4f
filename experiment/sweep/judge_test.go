package sweep

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/report"
)

// TestOpenOutcome: the outcome of an open sweep (its exit code) reads the trust rule's
// outcome of the points that bound its result (no clock, crafted points).
func TestOpenOutcome(t *testing.T) {
	yes, no := true, false
	pt := func(rate float64, pass *bool, o report.Outcome) *openPoint {
		return &openPoint{rate: rate, pass: pass, outcome: o, test: &report.Test{Name: "get", VerdictReason: "why"}}
	}
	for _, c := range []struct {
		name   string
		points []*openPoint
		slo    bool
		best   float64
		want   report.Outcome
	}{
		{"found, the failure above is the server's", []*openPoint{pt(1000, &yes, report.Trusted), pt(2000, &no, report.Violated)}, true, 1000, report.Trusted},
		{"found, the failure above could be the generator's", []*openPoint{pt(1000, &yes, report.Trusted), pt(2000, &no, report.Untrusted)}, true, 1000, report.Untrusted},
		{"found, one of two failures there is the server's", []*openPoint{pt(1000, &yes, report.Trusted), pt(2000, &no, report.Untrusted), pt(2000, &no, report.Violated)}, true, 1000, report.Trusted},
		{"an untrusted failure far above the bracket does not matter", []*openPoint{pt(1000, &yes, report.Trusted), pt(1500, &no, report.Violated), pt(4000, &no, report.Untrusted)}, true, 1000, report.Trusted},
		{"found at the top, nothing failed", []*openPoint{pt(1000, &yes, report.Trusted)}, true, 1000, report.Trusted},
		{"none met, the server's", []*openPoint{pt(1000, &no, report.Violated), pt(250, &no, report.Violated)}, true, 0, report.Violated},
		{"none met, the lowest failure could be the generator's", []*openPoint{pt(1000, &no, report.Violated), pt(250, &no, report.Untrusted)}, true, 0, report.Untrusted},
		{"target lost", []*openPoint{pt(1000, &no, report.Failed)}, true, 0, report.Failed},
		{"no slo, all ok", []*openPoint{pt(1000, nil, report.Trusted), pt(2000, nil, report.Trusted)}, false, 0, report.Trusted},
		// A point with too few samples for a percentile clause is neither
		// pass nor fail (pass nil): below a sustainable rate it changes
		// nothing; a search that found none exits 3 as without it.
		{"unjudged below a sustainable rate", []*openPoint{pt(250, nil, report.Trusted), pt(1000, &yes, report.Trusted), pt(2000, &no, report.Violated)}, true, 1000, report.Trusted},
		{"unjudged, none met", []*openPoint{pt(1000, &no, report.Violated), pt(250, nil, report.Trusted)}, true, 0, report.Violated},
		{"only unjudged", []*openPoint{pt(250, nil, report.Trusted)}, true, 0, report.Violated},
		{"no slo, a step behind", []*openPoint{pt(1000, nil, report.Trusted), pt(2000, nil, report.Untrusted)}, false, 0, report.Untrusted},
	} {
		got, notes := openOutcome(c.points, c.slo, c.best, false)
		if got != c.want {
			t.Errorf("%s: outcome %d, want %d (notes %q)", c.name, got, c.want, notes)
		}
		if c.want == report.Untrusted && !strings.Contains(strings.Join(notes, "\n"), "not trustworthy") {
			t.Errorf("%s: notes %q do not say why", c.name, notes)
		}
	}
}
