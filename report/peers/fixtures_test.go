package peers

import (
	"testing"

	"github.com/pacer-load/pacer/report"
)

// hostileDoc is a document of one open GET test.
func hostileDoc(t *testing.T) *report.Document {
	t.Helper()
	test, err := report.Synthetic(report.SyntheticRun{Name: "GET", Mode: "open", Rate: 2000, Seconds: 1, Base: 0.2, Interval: 0.25, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	return report.SyntheticDocument("open", test)
}
