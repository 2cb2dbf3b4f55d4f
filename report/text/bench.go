package text

import (
	"fmt"
	"io"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// BenchCommands writes, after redis-benchmark's report of a mix, each
// command's share and latency (pacer's addition; redis-benchmark has no
// mixes), with o.Percentiles in place of p50 and p99. quiet prints one
// indented line per command.
func BenchCommands(w io.Writer, t *report.Test, quiet bool, o report.TextOptions) error {
	commands := t.MustFacts().Commands
	if len(commands) == 0 {
		return nil
	}
	var b strings.Builder
	var total uint64
	for _, c := range commands {
		total += c.Counts.Completed + c.Counts.Errors
	}
	if !quiet {
		b.WriteString("Per command:\n")
	}
	for _, c := range commands {
		s := histo.Summarize(c.Response)
		n := c.Counts.Completed + c.Counts.Errors
		share := 0.0
		if total > 0 {
			share = 100 * float64(n) / float64(total)
		}
		lat := percentilesText(s, c.Response, o.Percentiles, ", ")
		fmt.Fprintf(&b, "  %s: %.2f%% of requests (%d), errors %d, %s, max=%s msec\n",
			safetext.Escape(c.Name), share, n, c.Counts.Errors, lat, millis(s, s.Max))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
