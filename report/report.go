// Package report renders results: the human summary, the quiet line and the
// pacer.result/v1 JSON document. It reads scheduler results and histo
// histograms and writes to an io.Writer; it never touches sockets.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// Text writes the human summary of one open-model result, with its SLO
// verdict when slo is not nil.
func Text(w io.Writer, r *scheduler.Result, slo *SLOResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "====== %s ======\n", r.Name)
	bound := fmt.Sprintf("%.3f s", r.Window.Seconds())
	fmt.Fprintf(&b, "  open model: %s req/s %s timeline, %d connections, %s pacing\n",
		r.TargetRate, r.Arrival, r.Connections, r.Pacing)
	fmt.Fprintf(&b, "  latency counted from the intended send time (no coordinated omission)\n")
	fmt.Fprintf(&b, "  target rate    %12.2f req/s\n", r.TargetRate.PerSecond())
	fmt.Fprintf(&b, "  achieved rate  %12.2f req/s over %s\n", r.AchievedRate(), bound)
	c := r.Counts
	fmt.Fprintf(&b, "  requests       scheduled %d = completed %d + errors %d + timeouts %d + unsent %d  (sent %d)\n",
		c.Scheduled, c.Completed, c.Errors, c.Timeouts, c.Unsent, c.Sent)
	if len(r.ErrorCodes) > 0 {
		fmt.Fprintf(&b, "  errors by code %s\n", errorCodes(r.ErrorCodes))
	}
	if r.FirstError != "" {
		fmt.Fprintf(&b, "  first error    %s\n", r.FirstError)
	}
	if r.ConnsLost > 0 || r.DroppedBacklog > 0 || r.Blocked > 0 {
		fmt.Fprintf(&b, "  connections    %d lost, %d reconnected; sends held back %.2f s; %d requests dropped as more than the backlog bound late\n",
			r.ConnsLost, r.Reconnects, r.Blocked.Seconds(), r.DroppedBacklog)
	}
	if r.Interrupted {
		fmt.Fprintf(&b, "  interrupted    partial result: the timeline stopped early\n")
	}
	b.WriteString("\n")
	writeTable(&b, []row{
		{"response", r.Response},
		{"service", r.Service},
		{"send lag", r.Lag},
	})
	if len(r.Commands) > 0 {
		b.WriteString("\n")
		writeCommands(&b, r)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  verdict: %s (%s)\n", r.Verdict, r.VerdictReason)
	if slo != nil {
		fmt.Fprintf(&b, "  %s\n", slo.Line())
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type row struct {
	name string
	h    *hdrhistogram.Histogram
}

func writeTable(b *strings.Builder, rows []row) {
	fmt.Fprintf(b, "  %-14s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n",
		"latency (ms)", "min", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max")
	for _, r := range rows {
		s := histo.Summarize(r.h)
		if s.Count == 0 {
			fmt.Fprintf(b, "  %-14s %9s\n", r.name, "-")
			continue
		}
		fmt.Fprintf(b, "  %-14s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
			r.name, s.Min, s.Mean, s.P50, s.P90, s.P95, s.P99, s.P999, s.P9999, s.Max)
	}
}

// writeCommands prints a mix's per-command counts and response times.
func writeCommands(b *strings.Builder, r *scheduler.Result) {
	fmt.Fprintf(b, "  %-14s %7s %10s %10s %7s %9s %7s %9s %9s %9s %9s\n",
		"per command", "share", "scheduled", "completed", "errors", "timeouts", "unsent", "resp p50", "p99", "p99.9", "max")
	var total uint64
	for _, c := range r.Commands {
		total += c.Counts.Scheduled
	}
	for _, c := range r.Commands {
		s := histo.Summarize(c.Response)
		share := 0.0
		if total > 0 {
			share = 100 * float64(c.Counts.Scheduled) / float64(total)
		}
		k := c.Counts
		fmt.Fprintf(b, "  %-14s %6.2f%% %10d %10d %7d %9d %7d %9.3f %9.3f %9.3f %9.3f\n",
			c.Name, share, k.Scheduled, k.Completed, k.Errors, k.Timeouts, k.Unsent, s.P50, s.P99, s.P999, s.Max)
	}
}

func errorCodes(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// Quiet writes the one-line summary, in the spirit of redis-benchmark -q:
//
//	SET: 9999.98 requests per second (target 10000), response p50=0.111 msec p99=0.223 msec, ok
func Quiet(w io.Writer, r *scheduler.Result, slo *SLOResult) error {
	s := histo.Summarize(r.Response)
	extra := ""
	if r.Interrupted {
		extra = ", interrupted"
	}
	if slo != nil {
		if slo.Pass {
			extra += ", slo pass"
		} else {
			extra += ", slo violated"
		}
	}
	_, err := fmt.Fprintf(w, "%s: %.2f requests per second (target %s), response p50=%.3f msec p99=%.3f msec, %s%s\n",
		r.Name, r.AchievedRate(), r.TargetRate, s.P50, s.P99, r.Verdict, extra)
	return err
}
