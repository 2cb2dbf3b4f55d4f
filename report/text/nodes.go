package text

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// WriteNodes writes t's per-node table (a cluster run's per-primary
// counts, redirects, response and service times and the server's own
// count), as the full text report shows it after the latency table;
// nothing without per-node results.
func WriteNodes(w io.Writer, t *report.Test) error {
	if len(t.Nodes) == 0 {
		return nil
	}
	var b strings.Builder
	writeNodes(&b, t)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNodes prints a cluster run's per-primary table: a primary's counts,
// redirects and response times (p50, p99, p99.9, max) on its line, its
// service times below them, and what the primary itself counted
// (commandstats: calls and time per call) when it was asked:
//
//	per node               slots  …  resp p50       p99     p99.9       max
//	127.0.0.1:7000          5461  …     0.139     5.206    14.213    16.212
//	    service (ms)              …     0.044     1.251     3.625     4.506
//	    server              33334 calls, 0.85 µs/call
//
// The primaries come in the order of their first slot (the run lists them
// so). A primary that joined during the run says "joined" where the
// others say how many slots they had.
func writeNodes(b *strings.Builder, t *report.Test) {
	f := t.MustFacts()
	service := false // service times to show: absent from documents written before nodes carried them
	for _, n := range t.Nodes {
		service = service || n.ServiceMs != nil
	}
	slotsHead := "slots"
	if !clustered(t.Nodes) {
		slotsHead = "role"
	}
	fmt.Fprintf(b, "  %-21s %7s %10s %10s %7s %9s %7s %7s %6s %9s %9s %9s %9s\n", "per node", slotsHead, "sent", "completed",
		"errors", "timeouts", "unsent", "moved", "ask", "resp p50", "p99", "p99.9", "max")
	for i, n := range t.Nodes {
		var h *hdrhistogram.Histogram
		if i < len(f.Nodes) {
			h = f.Nodes[i]
		}
		s := histo.Summarize(h)
		k := nodeCounts(n)
		slots := strconv.Itoa(n.Slots)
		switch {
		case n.Joined:
			slots = "joined"
		case slotsHead == "role":
			slots = safetext.Escape(n.Role)
		case n.Role == "replica": // a cluster's replica: its primary's slots
			slots = "replica"
		}
		fmt.Fprintf(b, "  %-21s %7s %10d %10d %7d %9d %7d %7d %6d %9s %9s %9s %9s\n", safetext.Escape(n.Addr), slots,
			k.Sent, k.Completed, k.Errors, k.Timeouts, k.Unsent, n.Moved, n.Ask,
			millis(s, s.P50), millis(s, s.P99), millis(s, s.P999), millis(s, s.Max))
		if service {
			var sv histo.Summary
			if n.ServiceMs != nil {
				sv = *n.ServiceMs
				sv.Count = 1 // a summary is written only with samples; the JSON keeps no count
			}
			fmt.Fprintf(b, "    %-19s %70s %9s %9s %9s %9s\n", "service (ms)", "",
				millis(sv, sv.P50), millis(sv, sv.P99), millis(sv, sv.P999), millis(sv, sv.Max))
		}
		if st := n.Server; st != nil {
			fmt.Fprintf(b, "    %-19s %s\n", "server", nodeServerText(st))
		}
	}
}

// clustered reports whether nodes are a cluster's: some own slots.
func clustered(nodes []report.Node) bool {
	for _, n := range nodes {
		if n.Slots > 0 || n.Joined {
			return true
		}
	}
	return false
}

// nodeServerText is what a primary counted during the test, in one
// phrase: "33334 calls, 0.85 µs/call", or why it is not known.
func nodeServerText(s *serverinfo.Stats) string {
	if !s.Available {
		return "not available (" + safetext.Escape(s.Error) + ")"
	}
	c := s.Total()
	text := strconv.FormatUint(c.Calls, 10) + " calls, " + usecText(c.UsecPerCall) + "/call"
	if h := c.LatencyHistogram; h != nil {
		text += ", p50 ≤ " + bucketText(h, 50) + ", p99 ≤ " + bucketText(h, 99)
	}
	if s.Keys != nil {
		text += "; " + strconv.FormatUint(*s.Keys, 10) + " keys after"
	}
	return text
}

// nodeCounts are a node's counts as a test's.
func nodeCounts(n report.Node) scheduler.Counts {
	return scheduler.Counts{Scheduled: n.Scheduled, Sent: n.Sent, Completed: n.Completed,
		Errors: n.Errors, Timeouts: n.Timeouts, Unsent: n.Unsent}
}
