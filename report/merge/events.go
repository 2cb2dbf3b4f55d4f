package merge

import (
	"slices"
	"sort"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/report"
)

// mergeEvents merges the events of shards of one test: each shard saw the
// topology move on its own, so events of one kind on a shared node first
// seen within events.MergeGap of each other are one event, with the
// union of their nodes, slots and errors, and windows that span the
// shards' (failures added, the worst spike kept).
func mergeEvents(parts []report.Test) (evs []report.Event, boundMs *float64, dropped int) {
	var all []report.Event
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
			if !slices.Contains(m.Nodes, n) {
				m.Nodes = append(m.Nodes, n)
			}
		}
		for _, s := range e.Seen {
			if !slices.Contains(m.Seen, s) {
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
		if slices.Contains(a, n) {
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
func spanWindows(a, b *report.EventWindow) *report.EventWindow {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		w := *b
		return &w
	case b == nil:
		return a
	}
	w := &report.EventWindow{StartS: min(a.StartS, b.StartS), EndS: max(a.EndS, b.EndS), Failed: a.Failed + b.Failed,
		SpikeMs: max(a.SpikeMs, b.SpikeMs), Open: a.Open || b.Open}
	w.UnavailableS = report.Round(w.EndS-w.StartS, 6)
	return w
}
