package report

import (
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
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
	return &EventWindow{StartS: offsetSeconds(w.Start), EndS: offsetSeconds(w.End), UnavailableS: Round(w.Unavailable().Seconds(), 6),
		Failed: w.Failed, SpikeMs: Round(histo.Millis(w.Worst), 3), Open: w.Open}
}

// offsetSeconds is an offset in ns as the JSON's seconds (to the µs).
func offsetSeconds(ns int64) float64 {
	if ns < 0 {
		return -Round(float64(-ns)/1e9, 6)
	}
	return Round(float64(ns)/1e9, 6)
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

// eventBoundMs is the bound a result's windows were judged against, in
// ms (nil when it has no events).
func eventBoundMs(r *scheduler.Result) *float64 {
	if len(r.Events) == 0 {
		return nil
	}
	v := Round(histo.Millis(int64(r.EventBound)), 6)
	return &v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
