package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
)

// Event is one thing that happened to the topology during a test, as the
// JSON keeps it (see package events): its kind, when it was first and
// last seen (seconds from the timeline's start, as intervals' start_s),
// the nodes and slots it touched, the errors and what else was seen, and
// its windows for writes and reads.
type Event struct {
	Kind  string   `json:"kind"`
	AtS   float64  `json:"at_s"`
	LastS float64  `json:"last_s"`
	Nodes []string `json:"nodes"`
	// Slots are [lo, hi] ranges (a cluster's), absent when none.
	Slots  [][2]uint16       `json:"slots,omitempty"`
	Errors map[string]uint64 `json:"errors,omitempty"`
	Seen   []string          `json:"seen,omitempty"`
	Detail string            `json:"detail,omitempty"`
	Write  *EventWindow      `json:"write"`
	Read   *EventWindow      `json:"read"`
}

// EventWindow is how long an event kept a class of requests (writes or
// reads) from being served: from the intended time of the first request
// that failed, or whose response exceeded the test's event_bound_ms,
// because of it, to that of the first served within the bound after
// (unavailable_s = end_s − start_s), the slowest response or wait in it
// (spike_ms) and how many failed. Open says nothing was served again
// before the timeline ended. When nothing went wrong around the event
// the window is empty, at the event's instant; an event near which the
// class sent nothing has none (null).
type EventWindow struct {
	StartS       float64 `json:"start_s"`
	EndS         float64 `json:"end_s"`
	UnavailableS float64 `json:"unavailable_s"`
	Failed       uint64  `json:"failed"`
	SpikeMs      float64 `json:"spike_ms"`
	Open         bool    `json:"open,omitempty"`
}

// eventsJSON converts a result's events.
func eventsJSON(r *scheduler.Result) []Event {
	var out []Event
	for _, e := range r.Events {
		j := Event{Kind: e.Kind, AtS: offsetSeconds(e.At), LastS: offsetSeconds(e.Last), Nodes: e.Nodes, Errors: e.Errors, Seen: e.Seen, Detail: e.Detail,
			Write: windowJSON(e.Write), Read: windowJSON(e.Read)}
		if j.Nodes == nil {
			j.Nodes = []string{}
		}
		for _, s := range e.Slots {
			j.Slots = append(j.Slots, [2]uint16{s.Lo, s.Hi})
		}
		out = append(out, j)
	}
	return out
}

func windowJSON(w *events.Window) *EventWindow {
	if w == nil {
		return nil
	}
	return &EventWindow{StartS: offsetSeconds(w.Start), EndS: offsetSeconds(w.End), UnavailableS: round(w.Unavailable().Seconds(), 6),
		Failed: w.Failed, SpikeMs: round(histo.Millis(w.Worst), 3), Open: w.Open}
}

// offsetSeconds is an offset in ns as the JSON's seconds (to the µs).
func offsetSeconds(ns int64) float64 {
	if ns < 0 {
		return -round(float64(-ns)/1e9, 6)
	}
	return round(float64(ns)/1e9, 6)
}

// WorstUnavailable is the longest window of any of evs, writes or reads,
// in seconds (0 when none has one).
func WorstUnavailable(evs []Event) float64 {
	worst := 0.0
	for _, e := range evs {
		for _, w := range []*EventWindow{e.Write, e.Read} {
			if w != nil {
				worst = max(worst, w.UnavailableS)
			}
		}
	}
	return worst
}

// EventsIn returns the events of evs whose windows start in [from, to)
// (an event without a window: first seen there).
func EventsIn(evs []Event, from, to time.Duration) []Event {
	var out []Event
	lo, hi := from.Seconds(), to.Seconds()
	for _, e := range evs {
		at := e.AtS
		for _, w := range []*EventWindow{e.Write, e.Read} {
			if w != nil {
				at = min(at, w.StartS)
			}
		}
		if at >= lo && at < hi {
			out = append(out, e)
		}
	}
	return out
}

// markIntervals gives each interval the indexes of the events that
// happened in it: first seen there, or whose window overlaps it.
func markIntervals(ivs []Interval, evs []Event) {
	for k := range ivs {
		iv := &ivs[k]
		iv.Events = nil
		lo, hi := iv.StartS, iv.StartS+iv.DurationS
		for i, e := range evs {
			in := e.AtS >= lo && e.AtS < hi
			for _, w := range []*EventWindow{e.Write, e.Read} {
				in = in || w != nil && w.StartS < hi && w.EndS >= lo
			}
			if in {
				iv.Events = append(iv.Events, i)
			}
		}
	}
}

// writeEvents writes a test's events section: each event's instant, kind,
// nodes and slots, what was seen, and its windows for writes and reads.
//
//	events (a request counts against one when it failed or took over 1.000 ms)
//	  10.003 s  failover   127.0.0.1:7001 -> 127.0.0.1:7002 (sentinel 127.0.0.1:26379)
//	            seen +switch-master, connection lost (50)
//	            writes: unavailable 0.012 s (9.998–10.010 s), 3 failed, spike 12.410 ms
//	            reads:  served throughout
func writeEvents(b *strings.Builder, t *Test) {
	if len(t.Events) == 0 {
		return
	}
	bound := "failed"
	if t.EventBoundMs != nil && *t.EventBoundMs > 0 {
		bound += " or took over " + FormatValue(*t.EventBoundMs, "ms")
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
func SeenText(e Event) string {
	var parts []string
	for _, s := range e.Seen {
		if n, ok := e.Errors[s]; ok {
			s += " (" + strconv.FormatUint(n, 10) + ")"
		}
		parts = append(parts, s)
	}
	var rest []string
	for code, n := range e.Errors {
		if !contains(e.Seen, code) {
			rest = append(rest, code+" ("+strconv.FormatUint(n, 10)+")")
		}
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WindowText words a window: "unavailable 0.012 s (9.998–10.010 s), 3
// failed, spike 12.410 ms", that the class was served throughout (an
// empty window), or that none of it was sent near the event (none).
func WindowText(w *EventWindow) string {
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
		strconv.FormatFloat(w.StartS, 'f', 3, 64), end, w.Failed, FormatValue(w.SpikeMs, "ms"))
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

// eventBoundMs is the bound a result's windows were judged against, in
// ms (nil when it has no events).
func eventBoundMs(r *scheduler.Result) *float64 {
	if len(r.Events) == 0 {
		return nil
	}
	v := round(histo.Millis(int64(r.EventBound)), 6)
	return &v
}

// mergeEvents merges the events of shards of one test: each shard saw the
// topology move on its own, so events of one kind on a shared node first
// seen within events.MergeGap of each other are one event, with the
// union of their nodes, slots and errors, and windows that span the
// shards' (failures added, the worst spike kept).
func mergeEvents(parts []Test) (evs []Event, boundMs *float64, dropped int) {
	var all []Event
	for _, p := range parts {
		all = append(all, p.Events...)
		dropped += p.EventsDropped
		if p.EventBoundMs != nil && (boundMs == nil || *p.EventBoundMs > *boundMs) {
			v := *p.EventBoundMs
			boundMs = &v
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].AtS < all[j].AtS })
	gap := events.MergeGap.Seconds()
	for _, e := range all {
		k := -1
		for i := range evs {
			if evs[i].Kind == e.Kind && e.AtS-evs[i].AtS <= gap && shareNode(evs[i].Nodes, e.Nodes) {
				k = i
			}
		}
		if k < 0 {
			e.Errors = copyCodes(e.Errors)
			e.Nodes, e.Seen = append([]string{}, e.Nodes...), append([]string(nil), e.Seen...)
			evs = append(evs, e)
			continue
		}
		m := &evs[k]
		m.LastS = max(m.LastS, e.LastS)
		for _, n := range e.Nodes {
			if !contains(m.Nodes, n) {
				m.Nodes = append(m.Nodes, n)
			}
		}
		for _, s := range e.Seen {
			if !contains(m.Seen, s) {
				m.Seen = append(m.Seen, s)
			}
		}
		for code, n := range e.Errors {
			if m.Errors == nil {
				m.Errors = map[string]uint64{}
			}
			m.Errors[code] += n
		}
		m.Slots = mergeSlotRanges(m.Slots, e.Slots)
		m.Write, m.Read = spanWindows(m.Write, e.Write), spanWindows(m.Read, e.Read)
	}
	return evs, boundMs, dropped
}

func shareNode(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, n := range b {
		if contains(a, n) {
			return true
		}
	}
	return false
}

func copyCodes(m map[string]uint64) map[string]uint64 {
	if m == nil {
		return nil
	}
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mergeSlotRanges(a, b [][2]uint16) [][2]uint16 {
	var rs, add []events.SlotRange
	for _, r := range a {
		rs = append(rs, events.SlotRange{Lo: r[0], Hi: r[1]})
	}
	for _, r := range b {
		add = append(add, events.SlotRange{Lo: r[0], Hi: r[1]})
	}
	var out [][2]uint16
	for _, r := range events.AddSlots(rs, add) {
		out = append(out, [2]uint16{r.Lo, r.Hi})
	}
	return out
}

// spanWindows is the window spanning a and b (either may be nil).
func spanWindows(a, b *EventWindow) *EventWindow {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		w := *b
		return &w
	case b == nil:
		return a
	}
	w := &EventWindow{StartS: min(a.StartS, b.StartS), EndS: max(a.EndS, b.EndS), Failed: a.Failed + b.Failed,
		SpikeMs: max(a.SpikeMs, b.SpikeMs), Open: a.Open || b.Open}
	w.UnavailableS = round(w.EndS-w.StartS, 6)
	return w
}
