package text

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Text that came from a server (error codes and texts, a verdict's reason
// that quotes a connection error) or from a template (command names, test
// titles) goes through safetext.Escape before it reaches a terminal:
// control bytes and invalid UTF-8 print as \xNN, never as escape codes.

// stagesMean says what the target rate of a --stages run is.
func stagesMean(f *report.Facts) string {
	if len(f.Stages) == 0 {
		return ""
	}
	return " (the stages' mean over the measured window)"
}

// Text writes the human summary of one open-model test: its figures, its
// server's side (t.Server) when asked for, its verdict and its SLO's
// (t.SLO). o.Percentiles choose the columns of the latency tables.
func Text(w io.Writer, t *report.Test, o report.TextOptions) error {
	f, err := t.Facts()
	if err != nil {
		return err
	}
	if t.Messages != nil {
		return messagesText(w, t, f, o)
	}
	r := t
	var b strings.Builder
	fmt.Fprintf(&b, "====== %s ======\n", safetext.Escape(r.Name))
	bound := fmt.Sprintf("%.3f s", f.Window.Seconds())
	shape := f.Target.String() + " req/s"
	if len(f.Stages) > 0 {
		shape = "stages " + timeline.FormatStages(f.Stages)
	}
	fmt.Fprintf(&b, "  open model: %s %s timeline, %s, %s\n",
		shape, r.Arrival, connectionsText(t), pacingText(t, f))
	fmt.Fprintf(&b, "  latency counted from the intended send time (no coordinated omission)\n")
	for _, st := range t.PacingSteps {
		fmt.Fprintf(&b, "  pacing step    %s\n", PacingStepLine(st))
	}
	fmt.Fprintf(&b, "  target rate    %12.2f req/s%s\n", f.Target.PerSecond(), stagesMean(f))
	if f.Warmup > 0 && t.WarmupCounts != nil {
		w := *t.WarmupCounts
		fmt.Fprintf(&b, "  warmup         first %s sent, left out of every figure below: scheduled %d = completed %d + errors %d + timeouts %d + unsent %d\n",
			f.Warmup, w.Scheduled, w.Completed, w.Errors, w.Timeouts, w.Unsent)
	}
	fmt.Fprintf(&b, "  achieved rate  %12.2f req/s over %s\n", t.Achieved(), bound)
	c := r.Counts
	fmt.Fprintf(&b, "  requests       scheduled %d = completed %d + errors %d + timeouts %d + unsent %d  (sent %d)\n",
		c.Scheduled, c.Completed, c.Errors, c.Timeouts, c.Unsent, c.Sent)
	writeNetwork(&b, t)
	writeTLS(&b, t)
	if line := receiveClockLine(t.ReceiveClock); line != "" {
		fmt.Fprintf(&b, "  receive clock  %s\n", line)
	}
	if failed := c.Errors + c.Timeouts; failed > 0 {
		fmt.Fprintf(&b, "  error share    %s of scheduled (errors and timeouts)\n", percent(failed, c.Scheduled))
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, "  errors by code %s\n", errorCodes(r.Errors))
	}
	if r.FirstError != "" {
		fmt.Fprintf(&b, "  first error    %s\n", safetext.Escape(r.FirstError))
	}
	if r.Unsolicited > 0 {
		fmt.Fprintf(&b, "  unsolicited replies %d (never matched to requests)\n", r.Unsolicited)
	}
	if r.ConnectionsLost > 0 || r.DroppedBacklog > 0 || f.Blocked > 0 {
		fmt.Fprintf(&b, "  connections    %d lost, %d reconnected; sends held back %.2f s; %d requests dropped as more than the backlog bound late\n",
			r.ConnectionsLost, r.Reconnects, f.Blocked.Seconds(), r.DroppedBacklog)
	}
	if r.Interrupted {
		fmt.Fprintf(&b, "  interrupted    partial result: the timeline stopped early\n")
	}
	b.WriteString("\n")
	rows := []row{
		{"response", f.Response},
		{"service", f.Service},
		{"send lag", f.Lag},
	}
	if f.Receive != nil {
		rows = append(rows, row{"receive lag", f.Receive})
	}
	if f.Hiccups != nil {
		rows = append(rows, row{"host hiccups", f.Hiccups})
	}
	if len(o.Percentiles) > 0 {
		writeTablePercentiles(&b, rows, o.Percentiles)
	} else {
		writeTable(&b, rows)
	}
	if len(f.Commands) > 0 {
		b.WriteString("\n")
		writeCommands(&b, f.Commands, o.Percentiles)
	}
	if len(r.Nodes) > 0 {
		b.WriteString("\n")
		writeNodes(&b, t)
	}
	if len(t.Events) > 0 {
		b.WriteString("\n")
		writeEvents(&b, t)
	}
	if t.Visibility != nil || t.Wait != nil {
		b.WriteString("\n")
		writeReplication(&b, t)
	}
	if t.Server != nil {
		b.WriteString("\n")
		writeServer(&b, t, t.Server)
	}
	if f.Server != nil {
		if t.Server == nil {
			b.WriteString("\n")
		}
		writeServerProcess(&b, f.Server)
	}
	for _, ts := range t.Servers {
		fmt.Fprintf(&b, "\n  server side of %s (%s):\n", shardsText(ts.Shards), safetext.Escape(ts.Target))
		writeServer(&b, t, ts.Server)
	}
	b.WriteString("\n")
	b.WriteString(report.DecideLine(t))
	writeVerdict(&b, t)
	_, err = io.WriteString(w, b.String())
	return err
}

// writeVerdict writes a test's closing lines: its outcome with the trust
// rule's verdict and reason, the SLO's lines, and a blank line.
func writeVerdict(b *strings.Builder, t *report.Test) {
	fmt.Fprintf(b, "  verdict: %s (%s: %s)\n", verdict.Of(t), safetext.Escape(t.Verdict), safetext.Escape(t.VerdictReason))
	if slo := t.SLO; slo != nil {
		for _, l := range slo.Lines() {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
	b.WriteString("\n")
}

// connectionsText is "50 connections", or for a merged result the sum
// and its parts: "150 connections (50 + 50 + 50 over 3 shards)" (-c is
// per process).
func connectionsText(t *report.Test) string {
	s := fmt.Sprintf("%d connections", t.Connections)
	switch n := len(t.ShardConnections); {
	case n == 0:
	case n <= 4:
		parts := make([]string, n)
		for i, c := range t.ShardConnections {
			parts[i] = strconv.Itoa(c)
		}
		s += fmt.Sprintf(" (%s over %d shards)", strings.Join(parts, " + "), n)
	default:
		s += fmt.Sprintf(" (the sum over %d shards)", n)
	}
	return s
}

// shardsText names shards: "shard 2", "shards 1, 3".
func shardsText(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = strconv.Itoa(k)
	}
	if len(ks) == 1 {
		return "shard " + parts[0]
	}
	return "shards " + strings.Join(parts, ", ")
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

// writeTablePercentiles is writeTable with chosen percentiles between
// mean and max.
func writeTablePercentiles(b *strings.Builder, rows []row, ps []float64) {
	fmt.Fprintf(b, "  %-14s %9s %9s", "latency (ms)", "min", "mean")
	for _, p := range ps {
		fmt.Fprintf(b, " %9s", report.PercentileLabel(p))
	}
	fmt.Fprintf(b, " %9s\n", "max")
	for _, r := range rows {
		s := histo.Summarize(r.h)
		if s.Count == 0 {
			fmt.Fprintf(b, "  %-14s %9s\n", r.name, "-")
			continue
		}
		fmt.Fprintf(b, "  %-14s %9.3f %9.3f", r.name, s.Min, s.Mean)
		for _, v := range report.PercentileMillis(r.h, ps) {
			fmt.Fprintf(b, " %9.3f", v)
		}
		fmt.Fprintf(b, " %9.3f\n", s.Max)
	}
}

// writeCommands prints a mix's per-command counts and response times:
// p50, p99, p99.9 and max, or the chosen percentiles ps and max.
func writeCommands(b *strings.Builder, commands []scheduler.CommandResult, ps []float64) {
	labels := []string{"resp p50", "p99", "p99.9"}
	if len(ps) > 0 {
		labels = labels[:0]
		for i, p := range ps {
			l := report.PercentileLabel(p)
			if i == 0 {
				l = "resp " + l
			}
			labels = append(labels, l)
		}
	}
	fmt.Fprintf(b, "  %-14s %7s %10s %10s %7s %9s %7s", "per command", "share", "scheduled", "completed", "errors", "timeouts", "unsent")
	for _, l := range labels {
		fmt.Fprintf(b, " %9s", l)
	}
	fmt.Fprintf(b, " %9s\n", "max")
	var total uint64
	for _, c := range commands {
		total += c.Counts.Scheduled
	}
	for _, c := range commands {
		s := histo.Summarize(c.Response)
		share := 0.0
		if total > 0 {
			share = 100 * float64(c.Counts.Scheduled) / float64(total)
		}
		k := c.Counts
		vals := []float64{s.P50, s.P99, s.P999}
		if len(ps) > 0 {
			vals = report.PercentileMillis(c.Response, ps)
		}
		fmt.Fprintf(b, "  %-14s %6.2f%% %10d %10d %7d %9d %7d",
			safetext.Escape(c.Name), share, k.Scheduled, k.Completed, k.Errors, k.Timeouts, k.Unsent)
		for _, v := range vals {
			fmt.Fprintf(b, " %9s", millis(s, v))
		}
		fmt.Fprintf(b, " %9s\n", millis(s, s.Max))
	}
}

// millis formats one statistic of s in milliseconds, or "-" when s has no
// samples: a test where nothing completed has no latency, not a latency
// of zero.
func millis(s histo.Summary, v float64) string {
	if s.Count == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// percentilesText is a one-line run's latency: "p50=… msec" and "p99=…
// msec" of s, or with --percentiles those of h, joined by sep.
func percentilesText(s histo.Summary, h *hdrhistogram.Histogram, percentiles []float64, sep string) string {
	if len(percentiles) == 0 {
		return "p50=" + millis(s, s.P50) + " msec" + sep + "p99=" + millis(s, s.P99) + " msec"
	}
	parts := make([]string, len(percentiles))
	for i, v := range report.PercentileMillis(h, percentiles) {
		parts[i] = report.PercentileLabel(percentiles[i]) + "=" + millis(s, v) + " msec"
	}
	return strings.Join(parts, sep)
}

// percent formats n/total as a percentage with two decimals, or with as
// many as it takes to show a non-zero share as non-zero (1 in a million
// is 0.0001%, not 0.00%).
func percent(n, total uint64) string {
	if total == 0 {
		return "-"
	}
	v := 100 * float64(n) / float64(total)
	digits := 2
	for n > 0 && digits < maxPercentDigits && v < math.Pow(10, -float64(digits)) {
		digits++
	}
	return strconv.FormatFloat(v, 'f', digits, 64) + "%"
}

// maxPercentDigits bounds the decimals of a tiny share (1 in 10^10).
const maxPercentDigits = 8

// errorCodes lists error counts by code, most frequent first, "other"
// last.
func errorCodes(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		// The scheduler's bucket of codes beyond its top ones goes last,
		// whatever its count.
		if (keys[i] == scheduler.OtherErrors) != (keys[j] == scheduler.OtherErrors) {
			return keys[j] == scheduler.OtherErrors
		}
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", safetext.Escape(k), m[k])
	}
	return strings.Join(parts, ", ")
}

// Quiet writes the one-line summary, in the spirit of redis-benchmark -q:
//
//	SET: 9999.98 requests per second (target 10000), response p50=0.111 msec p99=0.223 msec, ok
//
// A target_lost verdict carries its reason; errors and timeouts add their
// share of the scheduled requests (", errors 5.00%"); a test with no
// latency samples prints p50=- and p99=-. o.Percentiles replace p50 and
// p99 ("response p50=0.111 msec p99.9=0.301 msec").
func Quiet(w io.Writer, t *report.Test, o report.TextOptions) error {
	f, err := t.Facts()
	if err != nil {
		return err
	}
	if t.Messages != nil {
		return messagesQuiet(w, t, f, o)
	}
	r, slo := t, t.SLO
	s := histo.Summarize(f.Response)
	verdict := verdict.Of(t).String()
	switch {
	case r.Verdict == report.VerdictTargetLost && r.VerdictReason != "":
		verdict += " (" + safetext.Escape(r.Verdict) + ": " + safetext.Escape(r.VerdictReason) + ")"
	case r.Verdict != report.VerdictOK && r.Verdict != "" && r.Verdict != verdict:
		verdict += " (" + safetext.Escape(r.Verdict) + ")"
	}
	extra := ""
	if failed := r.Counts.Errors + r.Counts.Timeouts; failed > 0 {
		extra += ", errors " + percent(failed, r.Counts.Scheduled)
	}
	if r.Interrupted {
		extra += ", interrupted"
	}
	if slo != nil {
		if slo.Pass {
			extra += ", slo pass"
		} else {
			extra += ", slo violated"
		}
		if len(slo.Warnings) > 0 {
			extra += " with warnings"
		}
	}
	lat := percentilesText(s, f.Response, o.Percentiles, " ")
	_, err = fmt.Fprintf(w, "%s: %.2f requests per second (target %s), response %s, %s%s\n",
		safetext.Escape(r.Name), t.Achieved(), f.Target, lat, verdict, extra)
	return err
}

// pacingText names the pacing, and for auto the quantum it chose.
func pacingText(t *report.Test, f *report.Facts) string {
	switch {
	case t.Pacing != "auto":
		return t.Pacing + " pacing"
	case len(t.PacingSteps) > 0:
		var b strings.Builder
		fmt.Fprintf(&b, "auto pacing (%s", quantumText(t.PacingSteps[0].FromQuantumUs))
		for i, st := range t.PacingSteps {
			then := ", then"
			if i > 0 {
				then = ","
			}
			fmt.Fprintf(&b, "%s from %s s a %s µs quantum", then, DiffNum(st.AtS), DiffNum(st.ToQuantumUs))
		}
		return b.String() + ")"
	case f.Quantum == 0:
		return "auto pacing (precise)"
	}
	return fmt.Sprintf("auto pacing (%d µs quantum)", f.Quantum.Microseconds())
}

// quantumText names a pacing quantum in µs: "precise" for 0.
func quantumText(us float64) string {
	if us == 0 {
		return "precise"
	}
	return DiffNum(us) + " µs quantum"
}

// PacingStepLine says when and why auto pacing took a step back.
func PacingStepLine(st report.PacingStep) string {
	return fmt.Sprintf("from %s to a %s µs quantum at %s s: the host's CPUs had %.2f of a CPU idle over %s s (%.0f%% busy; pacer %.2f CPUs), too little to pay for the finer pacing without taking CPU time from the server",
		quantumText(st.FromQuantumUs), DiffNum(st.ToQuantumUs), DiffNum(st.AtS), st.HostIdleCPUs, DiffNum(st.WindowS), st.HostBusyPct, st.PacerCPUs)
}

// receiveClockLine says what a reply's time is ("" for a document that
// does not say).
func receiveClockLine(clock string) string {
	switch clock {
	case scheduler.ReceiveKernel:
		return "kernel: a reply counts from when its last bytes reached this machine (the kernel's receive timestamp); receive lag is pacer's own delay in reading it"
	case scheduler.ReceiveRead:
		return "read: no kernel receive timestamps, a reply counts from when pacer read it (its own delay in reading is in every latency)"
	}
	return ""
}
