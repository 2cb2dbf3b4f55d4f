package text

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// writeEvents writes a test's events section: each event's instant, kind,
// nodes and slots, what was seen, and its windows for writes and reads.
//
//	events (a request counts against one when it failed or took over 1.000 ms)
//	  10.003 s  failover   127.0.0.1:7001 -> 127.0.0.1:7002 (sentinel 127.0.0.1:26379)
//	            seen +switch-master, connection lost (50)
//	            writes: unavailable 0.012 s (9.998–10.010 s), 3 failed, spike 12.410 ms
//	            reads:  served throughout
func writeEvents(b *strings.Builder, t *report.Test) {
	if len(t.Events) == 0 {
		return
	}
	bound := "failed"
	if t.EventBoundMs != nil && *t.EventBoundMs > 0 {
		bound += " or took over " + report.FormatValue(*t.EventBoundMs, "ms")
	}
	fmt.Fprintf(b, "  events (a request counts against one when it %s)\n", bound)
	for _, e := range t.Events {
		what := safetext.Escape(e.Detail)
		if what == "" {
			what = safetext.Escape(strings.Join(e.Nodes, ", "))
		}
		fmt.Fprintf(b, "  %9s s  %-12s %s\n", strconv.FormatFloat(e.AtS, 'f', 3, 64), e.Kind, what)
		if len(e.Slots) > 0 {
			fmt.Fprintf(b, "  %12s  slots %s\n", "", slotsText(e.Slots))
		}
		if seen := SeenText(e); seen != "" {
			fmt.Fprintf(b, "  %12s  seen %s\n", "", safetext.Escape(seen))
		}
		fmt.Fprintf(b, "  %12s  writes: %s\n", "", WindowText(e.Write))
		fmt.Fprintf(b, "  %12s  reads:  %s\n", "", WindowText(e.Read))
	}
	if t.EventsDropped > 0 {
		fmt.Fprintf(b, "  (and %d events more, not kept)\n", t.EventsDropped)
	}
}

// SeenText lists what an event saw, each error kind with its count.
func SeenText(e report.Event) string {
	var parts []string
	for _, s := range e.Seen {
		if n, ok := e.Errors[s]; ok {
			s += " (" + strconv.FormatUint(n, 10) + ")"
		}
		parts = append(parts, s)
	}
	var rest []string
	for code, n := range e.Errors {
		if !slices.Contains(e.Seen, code) {
			rest = append(rest, code+" ("+strconv.FormatUint(n, 10)+")")
		}
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), ", ")
}

// WindowText words a window: "unavailable 0.012 s (9.998–10.010 s), 3
// failed, spike 12.410 ms", that the class was served throughout (an
// empty window), or that none of it was sent near the event (none).
func WindowText(w *report.EventWindow) string {
	switch {
	case w == nil:
		return "none sent around it"
	case w.UnavailableS == 0 && w.Failed == 0:
		return "served throughout"
	}
	end := strconv.FormatFloat(w.EndS, 'f', 3, 64) + " s"
	if w.Open {
		end = "the end (never served again)"
	}
	return fmt.Sprintf("unavailable %s s (%s–%s), %d failed, spike %s", strconv.FormatFloat(w.UnavailableS, 'f', 3, 64),
		strconv.FormatFloat(w.StartS, 'f', 3, 64), end, w.Failed, report.FormatValue(w.SpikeMs, "ms"))
}

// slotsText is "0-5460, 10923" for slot ranges.
func slotsText(rs [][2]uint16) string {
	var parts []string
	for _, r := range rs {
		if r[0] == r[1] {
			parts = append(parts, strconv.Itoa(int(r[0])))
		} else {
			parts = append(parts, strconv.Itoa(int(r[0]))+"-"+strconv.Itoa(int(r[1])))
		}
	}
	return strings.Join(parts, ", ")
}
