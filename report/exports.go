package report

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// What the text rendering (report/text) reads of the judgement rules and
// of the facts' wording that stay here.

// OutcomeOf is a test's outcome as its verdict words say it (see
// outcomeOf), for a test read back from a document as for one just
// judged.
func OutcomeOf(t *Test) Outcome { return outcomeOf(t) }

// DecideLine is the text report's line on how a test used its budget to
// decide in ("" when it had none).
func DecideLine(d *Decide) string { return decideLine(d) }

// FormatValue prints a figure with its unit as the SLO's lines do
// ("1.25 ms", "0.5%").
func FormatValue(v float64, unit string) string { return formatValue(v, unit) }

// WaitText words a wait for a CPU: "3.2 ms", "41 µs".
func WaitText(d time.Duration) string { return waitText(d) }

// ShareText words a share of the time: "0.3%".
func ShareText(v float64) string { return shareText(v) }

// PercentileStats are the response percentiles of h as a test's
// response_percentiles hold them, without confidence intervals: what
// the text notes of a test written without them.
func PercentileStats(h *hdrhistogram.Histogram) []Percentile {
	return percentileStats(h, false, ciSource{})
}
