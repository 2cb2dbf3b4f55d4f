package text

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// OpenRow is one line of an open sweep's step table.
type OpenRow struct {
	Target, Achieved                  float64
	P50, P99, P999, Max               float64 // ms; NaN when no sample
	ErrorsPct                         float64
	Verdict                           string
	Pass                              *bool
	Aborted                           bool
	JudgedWith                        []int // earlier steps at the rate, judged together with it
	InsufficientP99, InsufficientP999 bool  // the sample cannot support p99, p99.9
	// Seconds is how long it was measured per --repeat run (a lengthened
	// step's added steps included); Unjudged the SLO's percentile clauses
	// its samples could not support, which left it unjudged (Pass nil).
	Seconds  float64
	Unjudged []string
	// Decision is StepInfo.Decision; Interval the percentile interval
	// that decided it (nil: none); Notes a few words each on why, shown
	// in parentheses ("unsustainable", "lengthened ×2").
	Decision string
	Interval *report.StepInterval
	Notes    []string
}

// NewOpenRow fills a row from a step's (pooled) result.
func NewOpenRow(r *report.Test, pass *bool, aborted bool) OpenRow {
	f := r.MustFacts()
	s := histo.Summarize(f.Response)
	row := OpenRow{Target: f.Target.PerSecond(), Achieved: r.Achieved(), Verdict: r.Verdict, Pass: pass, Aborted: aborted,
		P50: math.NaN(), P99: math.NaN(), P999: math.NaN(), Max: math.NaN(), Seconds: f.Window.Seconds()}
	if s.Count > 0 {
		row.P50, row.P99, row.P999, row.Max = s.P50, s.P99, s.P999, s.Max
		row.InsufficientP99, row.InsufficientP999 = histo.Insufficient(s.Count, 99), histo.Insufficient(s.Count, 99.9)
	}
	if r.Counts.Scheduled > 0 {
		row.ErrorsPct = 100 * float64(r.Counts.Errors+r.Counts.Timeouts) / float64(r.Counts.Scheduled)
	}
	return row
}

// WriteOpenSweep writes an open sweep's step table. A latency marked * has
// insufficient samples (fewer than 10 beyond it); secs is each step's
// measured duration. The slo cell says how the step was judged, with the
// 95% interval of the percentile that decided it in ms: "pass [0.61,
// 0.88]", "FAIL [1.20, 1.45] (with 3)", "uncertain [0.81, 1.12]".
func WriteOpenSweep(w io.Writer, rows []OpenRow) error {
	var b strings.Builder
	fmt.Fprintf(&b, "  %4s %12s %6s %12s %9s %9s %9s %9s %8s %-17s %s\n",
		"step", "target/s", "secs", "achieved/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "verdict", "slo")
	weak := false
	for i, r := range rows {
		slo := sloCell(r)
		p99, p999 := msCell(r.P99, r.InsufficientP99), msCell(r.P999, r.InsufficientP999)
		weak = weak || r.InsufficientP99 || r.InsufficientP999
		fmt.Fprintf(&b, "  %4d %12.1f %6.1f %12.1f %9s %9s %9s %9s %7.3f%% %-17s %s\n",
			i, r.Target, r.Seconds, r.Achieved, msCell(r.P50, false), p99, p999, msCell(r.Max, false), r.ErrorsPct,
			safetext.Escape(r.Verdict), slo)
	}
	if weak {
		fmt.Fprintf(&b, "  * insufficient samples: fewer than %d beyond the percentile\n", histo.MinTailSamples)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sloCell words a row's judgement: a word, the deciding interval, and
// why in parentheses.
func sloCell(r OpenRow) string {
	slo := "-"
	var why []string
	switch {
	case r.Aborted:
		slo = "FAIL"
		why = append(why, "aborted")
	case r.Pass == nil && len(r.Unjudged) > 0:
		slo = "unjudged"
		why = append(why, "too few samples for "+strings.Join(r.Unjudged, ", "))
	case r.Pass == nil && r.Decision != "":
		slo = r.Decision
	case r.Pass == nil:
	case *r.Pass:
		slo = "pass"
	default:
		slo = "FAIL"
	}
	if c := r.Interval; c != nil {
		slo += " [" + boundCell(c.Lo) + ", " + boundCell(c.Hi) + "]"
	}
	why = append(why, r.Notes...)
	if len(r.JudgedWith) > 0 {
		with := make([]string, len(r.JudgedWith))
		for k, j := range r.JudgedWith {
			with[k] = strconv.Itoa(j)
		}
		why = append(why, "with "+strings.Join(with, ","))
	}
	if len(why) > 0 {
		slo += " (" + strings.Join(why, ", ") + ")"
	}
	return slo
}

// boundCell prints an end of an interval in ms to three significant
// digits ("-" for none).
func boundCell(v *float64) string {
	if v == nil {
		return "-"
	}
	return report.FormatMs(*v)
}

func msCell(v float64, weak bool) string {
	if math.IsNaN(v) {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if weak {
		s += "*"
	}
	return s
}
