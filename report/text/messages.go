package text

import (
	"fmt"
	"io"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// maxReceiverRows is how many receivers the text lists one by one; the
// rest are summed in one line (the JSON has them all).
const maxReceiverRows = 20

// messagesText writes the human summary of a pubsub or stream test.
func messagesText(w io.Writer, t *report.Test, f *report.Facts, o report.TextOptions) error {
	m := t.Messages
	var b strings.Builder
	fmt.Fprintf(&b, "====== %s ======\n", safetext.Escape(t.Name))
	wd := wordsOf(m.Kind)
	noun, verb, unit, what, done := wd.noun, wd.sender, wd.unit, wd.from, wd.done
	shape := f.Target.String() + " " + unit
	if len(f.Stages) > 0 {
		shape = "stages " + timeline.FormatStages(f.Stages)
	}
	if t.Mode == "closed" {
		fmt.Fprintf(&b, "  closed-loop %s: each of %s waits for its reply before the next; %s counted from their actual send (what a closed-loop tool shows)\n",
			verb, connectionsText(t), noun)
	} else {
		fmt.Fprintf(&b, "  open model: %s %s %s timeline, %s, %s\n", verb, shape, t.Arrival, connectionsText(t), pacingText(t, f))
		fmt.Fprintf(&b, "  %s latency counted from each %s (no coordinated omission)\n", wd.delivery, what)
	}
	fmt.Fprintf(&b, "  %s\n", messagesShape(m))
	if f.Target.PerSecond() > 0 {
		fmt.Fprintf(&b, "  target rate    %12.2f %s%s\n", f.Target.PerSecond(), unit, stagesMean(f))
	}
	if f.Warmup > 0 && t.WarmupCounts != nil {
		fmt.Fprintf(&b, "  warmup         first %s %s, left out of every figure below (%d deliveries)\n", f.Warmup, done, m.WarmupDelivered)
	}
	fmt.Fprintf(&b, "  %-14s %12.2f %s over %.3f s\n", done, t.Achieved(), unit, f.Window.Seconds())
	c := t.Counts
	fmt.Fprintf(&b, "  requests       scheduled %d = completed %d + errors %d + timeouts %d + unsent %d  (sent %d)\n",
		c.Scheduled, c.Completed, c.Errors, c.Timeouts, c.Unsent, c.Sent)
	fmt.Fprintf(&b, "  %-14s expected %d = delivered %d + lost %d (%s)", wd.deliveries, m.Expected, m.Delivered, m.Lost, percent(m.Lost, m.Expected))
	if m.Duplicates > 0 || m.Reordered > 0 || m.Stale > 0 {
		fmt.Fprintf(&b, "; duplicates %d, out of order %d", m.Duplicates, m.Reordered)
		if m.Stale > 0 {
			fmt.Fprintf(&b, ", too late to tell %d", m.Stale)
		}
	}
	b.WriteString("\n")
	if m.Foreign > 0 {
		fmt.Fprintf(&b, "  foreign        %d payloads of another client or run on these channels (not measured)\n", m.Foreign)
	}
	if pr := m.PublishReceivers; pr != nil && pr.Replies > 0 {
		fmt.Fprintf(&b, "  %-14s mean %.2f per message (min %d, max %d), %d in all: the server's own count of deliveries\n",
			"receivers", pr.Mean, pr.Min, pr.Max, pr.Sum)
		for _, d := range pr.Drops {
			fmt.Fprintf(&b, "  %-14s PUBLISH counted %d receivers at %.3f s, %d before\n", "", d.To, d.AtS, d.From)
		}
	}
	if s := m.Stream; s != nil {
		fmt.Fprintf(&b, "  at least once  added %d; delivered %d, redelivered %d, never delivered %d; acknowledged %d\n",
			s.Added, m.Delivered, s.Redelivered, s.NeverDelivered, s.Acked)
		if l := s.Lag; l != nil {
			fmt.Fprintf(&b, "  consumer lag   %s\n", lagLine(l))
		}
	}
	if v := m.Tracking; v != nil {
		fmt.Fprintf(&b, "  %-14s %s\n", "tracking", trackingLine(v))
	}
	for _, e := range m.Events {
		fmt.Fprintf(&b, "  event          %s: %s (its last delivery reached this machine at %.3f s); it had %d, missed %d (counted lost)\n",
			safetext.Escape(e.Receiver), safetext.Escape(e.What), e.AtS, e.Delivered, e.Missed)
	}
	writeNetwork(&b, t)
	writeTLS(&b, t)
	if line := receiveClockLine(t.ReceiveClock); line != "" {
		fmt.Fprintf(&b, "  receive clock  %s\n", strings.ReplaceAll(line, "a reply", "a delivery"))
	}
	if failed := c.Errors + c.Timeouts; failed > 0 {
		fmt.Fprintf(&b, "  error share    %s of scheduled (errors and timeouts)\n", percent(failed, c.Scheduled))
	}
	if len(t.Errors) > 0 {
		fmt.Fprintf(&b, "  errors by code %s\n", errorCodes(t.Errors))
	}
	if t.FirstError != "" {
		fmt.Fprintf(&b, "  first error    %s\n", safetext.Escape(t.FirstError))
	}
	if t.ConnectionsLost > 0 || t.DroppedBacklog > 0 || f.Blocked > 0 {
		fmt.Fprintf(&b, "  connections    %d lost, %d reconnected; sends held back %.2f s; %d messages dropped as more than the backlog bound late\n",
			t.ConnectionsLost, t.Reconnects, f.Blocked.Seconds(), t.DroppedBacklog)
	}
	if m.ClockErrors > 0 {
		fmt.Fprintf(&b, "  clock          %d deliveries came out earlier than their intended instant (recorded as 0)\n", m.ClockErrors)
	}
	if t.Interrupted {
		fmt.Fprintf(&b, "  interrupted    partial result: the timeline stopped early\n")
	}
	b.WriteString("\n")
	pubResponse, _, err := m.Publish.Histograms.Decode()
	if err != nil {
		return err
	}
	rows := []row{{wd.delivery, f.Response}, {"from the send", f.Service}, {wd.cmd, pubResponse}, {"send lag", f.Lag}}
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
	b.WriteString("\n")
	writeReceivers(&b, m)
	if len(t.Nodes) > 0 {
		b.WriteString("\n")
		writeNodes(&b, t)
	}
	if len(t.Events) > 0 {
		b.WriteString("\n")
		writeEvents(&b, t)
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
	b.WriteString("\n")
	writeVerdict(&b, t)
	_, err = io.WriteString(w, b.String())
	return err
}

// words are what a message test's text calls its parts.
type words struct {
	noun, sender, unit, from, done string
	// delivery names a delivery, deliveries their count's line, cmd the
	// sender's command in the latency table.
	delivery, deliveries, cmd string
	// receiver and channels head the receivers' table.
	receiver, channels string
}

// wordsOf returns the words of a message test's kind.
func wordsOf(kind string) words {
	switch kind {
	case report.KindStream:
		return words{"entries", "producer", "entries/s", "entry's intended add", "added", "delivery", "deliveries", "xadd", "per consumer", "stream"}
	case report.KindTracking:
		return words{"writes", "writer", "writes/s", "write's intended instant", "written", "invalidation", "invalidations", "set", "per reader", "keys"}
	}
	return words{"messages", "publisher", "msg/s", "message's intended publish instant", "published", "delivery", "deliveries", "publish", "per subscriber", "channels"}
}

// trackingLine words a client-side caching test's accounting.
func trackingLine(v *report.Invalidations) string {
	s := fmt.Sprintf("%d pushes naming %d keys", v.Pushes, v.Keys)
	if v.BCAST {
		s += " (BCAST: every write of the prefix, to every reader)"
	} else {
		s += fmt.Sprintf("; %d refetches; %d writes found a reader without a copy (no invalidation due)", v.Refetches, v.Uncached)
		if v.StaleAtEnd > 0 {
			s += fmt.Sprintf("; %d copies left STALE at the end (a write with no invalidation: lost)", v.StaleAtEnd)
		}
	}
	if v.Flushes > 0 {
		s += fmt.Sprintf("; %d flushes (every key invalidated)", v.Flushes)
	}
	if v.Spurious > 0 {
		s += fmt.Sprintf("; %d with no write outstanding (evictions, other clients)", v.Spurious)
	}
	if v.Forgotten > 0 {
		s += fmt.Sprintf("; %d for writes too old to date (not measured)", v.Forgotten)
	}
	return s
}

// messagesShape says who publishes to whom.
func messagesShape(m *report.Messages) string {
	if m.Kind == report.KindTracking {
		mode := "CLIENT TRACKING on, each reader refetching a key once it is invalidated"
		if m.Tracking != nil && m.Tracking.BCAST {
			mode = "CLIENT TRACKING on BCAST over the key prefix"
		}
		return fmt.Sprintf("SET %d B values to %s cached by %s (RESP3, %s), fan-out %d",
			m.PayloadBytes, plural(m.Channels, "key"), plural(m.Subscribers, "reader"), mode, m.Subscribers)
	}
	if m.Kind == report.KindStream {
		return fmt.Sprintf("XADD %d B entries to %s, read by %s of %s each (XREADGROUP, XACK)",
			m.PayloadBytes, plural(m.Channels, "stream"), plural(m.Groups, "consumer group"), plural(m.Consumers, "consumer"))
	}
	verb, sub := "PUBLISH", "SUBSCRIBE"
	switch {
	case m.Sharded:
		verb, sub = "SPUBLISH", "SSUBSCRIBE"
	case m.Patterns:
		sub = "PSUBSCRIBE"
	}
	fan := ""
	if m.Subscribers >= m.Channels && m.Channels > 0 {
		per := float64(m.Subscribers) / float64(m.Channels)
		fan = fmt.Sprintf(", fan-out %.4g", per)
	}
	return fmt.Sprintf("%s %d B messages to %s; %s (%s)%s", verb, m.PayloadBytes, plural(m.Channels, "channel"), plural(m.Subscribers, "subscriber"), sub, fan)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// lagLine words the consumers' lag.
func lagLine(l *report.Lag) string {
	s := fmt.Sprintf("at most %d entries added and not yet delivered, %d at the end; pending (delivered, not acknowledged) at most %d",
		l.MaxEntries, l.FinalEntries, l.MaxPending)
	switch {
	case l.Rising:
		s += fmt.Sprintf("; RISING %+.0f entries/s (Mann–Kendall S = %d over %d intervals, p = %.2g < %g): unsustainable, the consumers do not keep up",
			l.GrowthPerS, l.S, l.Intervals, l.P, l.Alpha)
	case l.Intervals >= 2:
		s += fmt.Sprintf("; flat (Mann–Kendall p = %.2g over %d intervals)", l.P, l.Intervals)
	}
	return s
}

// writeReceivers lists the receivers: each with its deliveries and
// latency, the worst first when they are many.
func writeReceivers(b *strings.Builder, m *report.Messages) {
	if len(m.Receivers) == 0 {
		return
	}
	rs := append([]report.Receiver(nil), m.Receivers...)
	if len(rs) > maxReceiverRows {
		// The receivers that lost most, then the slowest at p99.
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Lost != rs[j].Lost {
				return rs[i].Lost > rs[j].Lost
			}
			return p99Of(rs[i]) > p99Of(rs[j])
		})
	}
	stream := m.Kind == report.KindStream
	wd := wordsOf(m.Kind)
	if stream {
		fmt.Fprintf(b, "  %-26s %-16s %10s %10s %9s %9s %9s\n", wd.receiver, wd.channels, "delivered", "redeliv.", "p50 ms", "p99 ms", "max ms")
	} else {
		fmt.Fprintf(b, "  %-26s %-16s %10s %10s %8s %8s %9s %9s %9s\n", wd.receiver, wd.channels, "expected", "delivered", "lost", "reorder", "p50 ms", "p99 ms", "max ms")
	}
	for i, r := range rs {
		if i == maxReceiverRows {
			fmt.Fprintf(b, "  … and %d more (the JSON lists every one)\n", len(rs)-i)
			break
		}
		s := histo.Summary{}
		if r.LatencyMs != nil {
			s = *r.LatencyMs
			s.Count = 1 // a summary read back has no count; present means samples
		}
		name := safetext.Escape(r.Name)
		if r.EndedAtS != nil {
			name += fmt.Sprintf(" (ended %.1fs)", *r.EndedAtS)
		}
		if stream {
			fmt.Fprintf(b, "  %-26s %-16s %10d %10d %9s %9s %9s\n", name, safetext.Escape(r.Channels), r.Delivered, r.Duplicates,
				millis(s, s.P50), millis(s, s.P99), millis(s, s.Max))
			continue
		}
		fmt.Fprintf(b, "  %-26s %-16s %10d %10d %8d %8d %9s %9s %9s\n", name, safetext.Escape(r.Channels), r.Expected, r.Delivered, r.Lost, r.Reordered,
			millis(s, s.P50), millis(s, s.P99), millis(s, s.Max))
	}
}

func p99Of(r report.Receiver) float64 {
	if r.LatencyMs == nil {
		return 0
	}
	return r.LatencyMs.P99
}

// messagesQuiet is a messages test's one line (a stream's counts
// entries):
//
//	PUBLISH …: 10000.00 messages per second (target 10000), delivery p50=0.101 msec p99=0.352 msec, lost 0 of 100000, pass
func messagesQuiet(w io.Writer, t *report.Test, f *report.Facts, o report.TextOptions) error {
	m := t.Messages
	s := histo.Summarize(f.Response)
	extra := ""
	if failed := t.Counts.Errors + t.Counts.Timeouts; failed > 0 {
		extra += ", errors " + percent(failed, t.Counts.Scheduled)
	}
	if m.Stream != nil && m.Stream.Lag != nil && m.Stream.Lag.Rising {
		extra += ", lag rising"
	}
	if n := len(m.Events); n > 0 {
		extra += fmt.Sprintf(", %s ended early", plural(n, "receiver"))
	}
	if t.Interrupted {
		extra += ", interrupted"
	}
	if slo := t.SLO; slo != nil {
		if slo.Pass {
			extra += ", slo pass"
		} else {
			extra += ", slo violated"
		}
	}
	verdict := verdict.Of(t).String()
	switch {
	case t.Verdict == report.VerdictTargetLost && t.VerdictReason != "":
		verdict += " (" + safetext.Escape(t.Verdict) + ": " + safetext.Escape(t.VerdictReason) + ")"
	case t.Verdict != report.VerdictOK && t.Verdict != "" && t.Verdict != verdict:
		verdict += " (" + safetext.Escape(t.Verdict) + ")"
	}
	wd := wordsOf(m.Kind)
	_, err := fmt.Fprintf(w, "%s: %.2f %s per second (target %s), %s %s, lost %d of %d, %s%s\n",
		safetext.Escape(t.Name), t.Achieved(), wd.noun, f.Target, wd.delivery, percentilesText(s, f.Response, o.Percentiles, " "), m.Lost, m.Expected, verdict, extra)
	return err
}

// MessagesSideBySide writes the open and the closed publisher's delivery
// latencies side by side: what the closed loop's numbers hide.
func MessagesSideBySide(w io.Writer, open, closed *report.Test) error {
	fo, err := open.Facts()
	if err != nil {
		return err
	}
	fc, err := closed.Facts()
	if err != nil {
		return err
	}
	wd := wordsOf(open.Messages.Kind)
	var b strings.Builder
	fmt.Fprintf(&b, "====== open against closed %s ======\n", wd.sender)
	fmt.Fprintf(&b, "  %-38s %10s %10s %10s %10s %10s %12s %8s\n", wd.delivery+" latency (ms)", "p50", "p90", "p99", "p99.9", "max", wd.done, "lost")
	line := func(name string, t *report.Test, h *hdrhistogram.Histogram) {
		s := histo.Summarize(h)
		fmt.Fprintf(&b, "  %-38s %10s %10s %10s %10s %10s %12d %8d\n", name, millis(s, s.P50), millis(s, s.P90), millis(s, s.P99), millis(s, s.P999), millis(s, s.Max),
			t.Messages.Published, t.Messages.Lost)
	}
	intended := "open: from the intended publish"
	if open.Messages.Kind == report.KindTracking {
		intended = "open: from the intended write"
	}
	line(intended, open, fo.Response)
	line("closed: from the actual send", closed, fc.Response)
	so, sc := histo.Summarize(fo.Response), histo.Summarize(fc.Response)
	switch {
	case so.Count == 0 || sc.Count == 0:
	case sc.P99 > 0 && so.P99 >= 2*sc.P99:
		did := "published"
		if open.Messages.Kind == report.KindTracking {
			did = "wrote"
		}
		fmt.Fprintf(&b, "  the closed %s's p99 is %.1f× lower: it %s less while the server was slow (%.0f %s against %.0f), so its %s never waited for it\n",
			wd.sender, so.P99/sc.P99, did, closed.Achieved(), wd.unit, open.Achieved(), wd.noun)
	default:
		b.WriteString("  the two agree within a factor of two at p99: the server kept up with the open timeline\n")
	}
	b.WriteString("\n")
	_, err = io.WriteString(w, b.String())
	return err
}
