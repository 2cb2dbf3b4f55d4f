// Package events is what happened to the topology during a run, on the
// run's timeline: a failover, slots that moved, connections to a node
// lost and re-established, a role change, a burst of LOADING, MASTERDOWN,
// READONLY, CLUSTERDOWN or TRYAGAIN replies. The drivers note what they
// see (Log.Note; rare, may allocate); a Tally records, cheaply and for
// every request, which slices of the timeline went bad for writes and for
// reads; Windows puts the two together into each event's window: from the
// first request that failed or exceeded the bound because of it to the
// first that went well after it.
//
// It imports nothing of pacer's: the scheduler, the Sentinel follower and
// the cluster routing note events into it, and the report renders them.
package events

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Kinds of events, from the most telling to the least: a note merged into
// an event of another kind makes it the more telling of the two.
const (
	// Failover: a replica took its primary's place (Sentinel's
	// +switch-master, a cluster replica that now serves its primary's
	// slots).
	Failover = "failover"
	// RoleChange: a node turned from primary to replica or back without
	// a failover pacer saw (Sentinel's +convert-to-slave).
	RoleChange = "role_change"
	// PrimaryDown: the sentinels agree the primary is down (+odown).
	PrimaryDown = "primary_down"
	// SlotsMoved: slots that changed hands (MOVED replies, a refreshed
	// slot map that differs).
	SlotsMoved = "slots_moved"
	// Topology: a refreshed map that differs otherwise (a node joined or
	// left).
	Topology = "topology"
	// Connection: connections to a node lost, or re-established after
	// being lost.
	Connection = "connection"
	// Errors: replies that say the node cannot serve now (LOADING,
	// MASTERDOWN, READONLY, CLUSTERDOWN, TRYAGAIN).
	Errors = "errors"
)

// rank orders the kinds, most telling first.
var rank = []string{Failover, RoleChange, PrimaryDown, SlotsMoved, Topology, Connection, Errors}

func rankOf(kind string) int {
	if i := slices.Index(rank, kind); i >= 0 {
		return i
	}
	return len(rank)
}

// TopologyError returns the code of an error reply that says the node
// cannot serve now ("LOADING", "MASTERDOWN", "READONLY", "CLUSTERDOWN",
// "TRYAGAIN", "NOREPLICAS"), "" for any other reply. It does not
// allocate.
func TopologyError(text []byte) string {
	for _, c := range topologyCodes {
		if len(text) >= len(c) && string(text[:len(c)]) == c && (len(text) == len(c) || text[len(c)] == ' ') {
			return c
		}
	}
	return ""
}

var topologyCodes = []string{"LOADING", "MASTERDOWN", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "NOREPLICAS"}

// SlotRange is the slots Lo to Hi, inclusive.
type SlotRange struct{ Lo, Hi uint16 }

// Note is one thing a driver saw: its kind, when (on the run's clock), on
// which node (host:port; "" for none in particular) and slots, with an
// error code or what was seen ("+switch-master", "connection lost",
// "reconnected", "MOVED") and a detail for the reader.
type Note struct {
	Kind  string
	At    int64
	Node  string
	To    string // a second node (a failover's new primary, where slots went)
	Slots []SlotRange
	// Code is an error code counted in the event's Errors ("READONLY",
	// "connection lost", "MOVED"); N how many (0 counts as 1).
	Code string
	N    uint64
	// Seen names what was seen, for the event's list; Detail is a
	// sentence for the reader (the first of an event is kept).
	Seen, Detail string
	// Closes says the note ends an earlier event on its node (a
	// connection back after it was lost): it joins the latest event
	// that names Node, however long ago.
	Closes bool
}

// Event is something that happened to the topology, with its window (set
// by Windows) for writes and for reads.
type Event struct {
	Kind string
	// At is when it was first seen, Last when last (run's clock, ns).
	At, Last int64
	Nodes    []string
	Slots    []SlotRange
	// Errors counts the replies and failures seen by kind ("READONLY",
	// "connection lost", "MOVED", "ASK").
	Errors map[string]uint64
	// Seen lists what was seen, in order, each once.
	Seen   []string
	Detail string
	// Write and Read are the event's windows (nil: that class saw
	// nothing wrong around it, or sent nothing).
	Write, Read *Window
}

// Limits on what a log keeps: events beyond MaxEvents are counted, not
// kept; an event keeps MaxSlotRanges ranges, MaxNodes nodes and
// MaxSeen names.
const (
	MaxEvents     = 1000
	MaxSlotRanges = 64
	MaxNodes      = 32
	MaxSeen       = 16
)

// MergeGap is how close a note must come to an event (after its last
// note) to be part of it: a failover's MOVED replies, lost connections
// and READONLY errors are one event, not many.
const MergeGap = time.Second

// Log collects a run's events. Safe for concurrent use; a nil *Log drops
// every note.
type Log struct {
	mu      sync.Mutex
	events  []Event
	dropped int
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{} }

// Note records n: merged into the latest event it belongs with (within
// MergeGap of its last note, and on one of its nodes, or either naming
// none), else a new event.
func (l *Log) Note(n Note) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n.Closes && n.Node != "" {
		for i := len(l.events) - 1; i >= 0; i-- {
			if e := &l.events[i]; slices.Contains(e.Nodes, n.Node) {
				e.merge(n)
				return
			}
		}
	}
	for i := len(l.events) - 1; i >= 0; i-- {
		e := &l.events[i]
		if n.At-e.Last > int64(MergeGap) {
			break
		}
		if e.related(n) {
			e.merge(n)
			return
		}
	}
	if len(l.events) >= MaxEvents {
		l.dropped++
		return
	}
	e := Event{Kind: n.Kind, At: n.At, Last: n.At, Detail: n.Detail}
	e.merge(n)
	l.events = append(l.events, e)
}

// related reports whether note n belongs with e: one of them names no
// node, or they share one.
func (e *Event) related(n Note) bool {
	if len(e.Nodes) == 0 || n.Node == "" && n.To == "" {
		return true
	}
	return slices.Contains(e.Nodes, n.Node) || n.To != "" && slices.Contains(e.Nodes, n.To)
}

// merge adds n to e.
func (e *Event) merge(n Note) {
	if rankOf(n.Kind) < rankOf(e.Kind) {
		e.Kind = n.Kind
		if n.Detail != "" {
			e.Detail = n.Detail
		}
	}
	if e.Detail == "" {
		e.Detail = n.Detail
	}
	e.At, e.Last = min(e.At, n.At), max(e.Last, n.At)
	for _, node := range []string{n.Node, n.To} {
		if node != "" && !slices.Contains(e.Nodes, node) && len(e.Nodes) < MaxNodes {
			e.Nodes = append(e.Nodes, node)
		}
	}
	if n.Code != "" {
		if e.Errors == nil {
			e.Errors = map[string]uint64{}
		}
		e.Errors[n.Code] += max(n.N, 1)
	}
	if n.Seen != "" && !slices.Contains(e.Seen, n.Seen) && len(e.Seen) < MaxSeen {
		e.Seen = append(e.Seen, n.Seen)
	}
	if len(n.Slots) > 0 {
		e.Slots = AddSlots(e.Slots, n.Slots)
	}
}

// AddSlots returns the ranges of a and b together, sorted and merged
// where they touch, at most MaxSlotRanges (the last then reaching to the
// end of what the others leave out).
func AddSlots(a, b []SlotRange) []SlotRange {
	all := append(slices.Clone(a), b...)
	sort.Slice(all, func(i, j int) bool { return all[i].Lo < all[j].Lo })
	var out []SlotRange
	for _, r := range all {
		if n := len(out); n > 0 && int(r.Lo) <= int(out[n-1].Hi)+1 {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	if len(out) > MaxSlotRanges {
		last := out[MaxSlotRanges-1]
		for _, r := range out[MaxSlotRanges:] {
			last.Hi = max(last.Hi, r.Hi)
		}
		out = append(out[:MaxSlotRanges-1], last)
	}
	return out
}

// Events returns a copy of the events so far, oldest first, and how many
// were dropped past MaxEvents.
func (l *Log) Events() ([]Event, int) {
	if l == nil {
		return nil, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Event, len(l.events))
	for i, e := range l.events {
		out[i] = e.clone()
	}
	return out, l.dropped
}

// Len returns how many events the log holds.
func (l *Log) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Shift returns a copy of e (its own slices and maps) with its instants
// and windows moved by d: an event of a run continued by another.
func (e Event) Shift(d int64) Event {
	e = e.clone()
	e.At, e.Last = e.At+d, e.Last+d
	for _, w := range []*Window{e.Write, e.Read} {
		if w != nil {
			w.Start, w.End = w.Start+d, w.End+d
		}
	}
	return e
}

func (e Event) clone() Event {
	e.Nodes = slices.Clone(e.Nodes)
	e.Slots = slices.Clone(e.Slots)
	e.Seen = slices.Clone(e.Seen)
	if e.Errors != nil {
		m := make(map[string]uint64, len(e.Errors))
		for k, v := range e.Errors {
			m[k] = v
		}
		e.Errors = m
	}
	if e.Write != nil {
		w := *e.Write
		e.Write = &w
	}
	if e.Read != nil {
		r := *e.Read
		e.Read = &r
	}
	return e
}
