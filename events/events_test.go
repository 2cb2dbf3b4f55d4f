package events

import (
	"slices"
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// TestNotesMerge: notes within MergeGap on a shared node are one event of
// the most telling kind; a note on another node, or past the gap, starts
// another.
func TestNotesMerge(t *testing.T) {
	l := NewLog()
	l.Note(Note{Kind: Connection, At: 100 * ms, Node: "a:1", Code: "connection lost", N: 3, Seen: "connection lost"})
	l.Note(Note{Kind: Failover, At: 400 * ms, Node: "a:1", To: "b:2", Seen: "+switch-master", Detail: "m: a:1 -> b:2"})
	l.Note(Note{Kind: Errors, At: 900 * ms, Node: "b:2", Code: "READONLY", Seen: "READONLY"})
	l.Note(Note{Kind: Errors, At: 950 * ms, Node: "c:3", Code: "LOADING"})          // another node
	l.Note(Note{Kind: Connection, At: 3000 * ms, Node: "a:1", Seen: "reconnected"}) // past the gap
	evs, dropped := l.Events()
	if dropped != 0 || len(evs) != 3 {
		t.Fatalf("%d events (%d dropped): %+v", len(evs), dropped, evs)
	}
	e := evs[0]
	if e.Kind != Failover || e.At != 100*ms || e.Last != 900*ms || e.Detail != "m: a:1 -> b:2" {
		t.Fatalf("merged event %+v", e)
	}
	if !slices.Equal(e.Nodes, []string{"a:1", "b:2"}) || !slices.Equal(e.Seen, []string{"connection lost", "+switch-master", "READONLY"}) {
		t.Fatalf("nodes %v seen %v", e.Nodes, e.Seen)
	}
	if e.Errors["connection lost"] != 3 || e.Errors["READONLY"] != 1 {
		t.Fatalf("errors %v", e.Errors)
	}
	if evs[1].Nodes[0] != "c:3" || evs[2].Kind != Connection {
		t.Fatalf("separate events %+v %+v", evs[1], evs[2])
	}
	l.Note(Note{Kind: Connection, At: 9000 * ms, Node: "c:3", Seen: "reconnected", Closes: true})
	if evs, _ = l.Events(); len(evs) != 3 || evs[1].Last != 9000*ms || !slices.Contains(evs[1].Seen, "reconnected") {
		t.Fatalf("a closing note long after: %+v", evs)
	}
	var nilLog *Log
	nilLog.Note(Note{Kind: Errors}) // drops it
	if n := nilLog.Len(); n != 0 {
		t.Fatal(n)
	}
}

func TestAddSlots(t *testing.T) {
	got := AddSlots([]SlotRange{{10, 20}}, []SlotRange{{21, 30}, {0, 5}, {3, 8}})
	if !slices.Equal(got, []SlotRange{{0, 8}, {10, 30}}) {
		t.Fatalf("%v", got)
	}
	var many []SlotRange
	for i := range 100 {
		many = append(many, SlotRange{uint16(3 * i), uint16(3 * i)})
	}
	got = AddSlots(nil, many)
	if len(got) != MaxSlotRanges || got[len(got)-1].Hi != 297 {
		t.Fatalf("%d ranges, last %v", len(got), got[len(got)-1])
	}
}

func TestTopologyError(t *testing.T) {
	for text, want := range map[string]string{
		"READONLY You can't write against a read only replica.": "READONLY",
		"LOADING Redis is loading the dataset in memory":        "LOADING",
		"CLUSTERDOWN The cluster is down":                       "CLUSTERDOWN",
		"TRYAGAIN Multiple keys request during rehashing":       "TRYAGAIN",
		"MASTERDOWN Link with MASTER is down":                   "MASTERDOWN",
		"NOREPLICAS Not enough good replicas to write.":         "NOREPLICAS",
		"ERR wrong number of arguments":                         "",
		"READONLYX":                                             "",
		"WRONGTYPE Operation against a key":                     "",
	} {
		if got := TopologyError([]byte(text)); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// feed records a request every ms of [from, to) of class c: each
// completes in resp, or fails when fail says so.
func feed(tl *Tally, c int, from, to int64, resp func(at int64) int64, fail func(at int64) bool) {
	for at := from; at < to; at += ms {
		if fail != nil && fail(at) {
			tl.Failed(c, at, 5*ms)
			continue
		}
		tl.Completed(c, at, resp(at))
	}
}

func fast(int64) int64 { return 100 * int64(time.Microsecond) }

// TestWindows: an outage that fails writes from 4.0 s to 4.5 s, seen at
// 4.2 s, is a write window of 0.5 s (its start exact, its end to the slice), and reads that go
// on are none; a stall that slows writes from 6.0 s to 6.3 s, over a
// 10 ms bound, is a window of 0.3 s to the slice; failures of one in
// three requests for a second are one window; failures until the end
// leave it open; a moment when all went well has an empty window, and one
// when nothing was sent none.
func TestWindows(t *testing.T) {
	tl := NewTally(0, 10*time.Second)
	feed(tl, Write, 0, 10_000*ms, func(at int64) int64 {
		if at >= 6000*ms && at < 6300*ms {
			return 50 * ms
		}
		return fast(at)
	}, func(at int64) bool {
		return at >= 4000*ms && at < 4500*ms || at >= 7000*ms && at < 8000*ms && (at/ms)%3 == 0 || at >= 9500*ms
	})
	feed(tl, Read, 0, 10_000*ms, fast, nil)
	evs := []Event{{At: 4200 * ms}, {At: 6100 * ms}, {At: 7500 * ms}, {At: 9600 * ms}, {At: 2000 * ms}}
	Windows(evs, tl, WindowOptions{Bound: 10 * time.Millisecond})
	slice := int64(tl.Slice())
	w := evs[0].Write
	if w == nil || w.Start != 4000*ms || w.End < 4499*ms || w.End > 4500*ms+slice || w.Failed != 500 || w.Open || evs[0].Read.Unavailable() != 0 {
		t.Fatalf("outage: write %+v read %+v", w, evs[0].Read)
	}
	if w.Worst != 5*ms {
		t.Fatalf("outage: worst %d", w.Worst)
	}
	w = evs[1].Write
	if w == nil || w.Start < 6000*ms-slice || w.Start > 6000*ms || w.End < 6300*ms-slice || w.End > 6300*ms+slice || w.Worst != 50*ms || w.Failed != 0 {
		t.Fatalf("stall: %+v", w)
	}
	w = evs[2].Write
	if w == nil || w.Start != 7000*ms+2*ms || w.End < 7998*ms || w.End > 8000*ms+slice {
		t.Fatalf("one in three: %+v", w)
	}
	w = evs[3].Write
	if w == nil || !w.Open || w.Start != 9500*ms || w.End != 10_000*ms {
		t.Fatalf("till the end: %+v", w)
	}
	for _, w := range []*Window{evs[4].Write, evs[4].Read} {
		if w == nil || w.Start != 2000*ms || w.End != 2000*ms || w.Failed != 0 {
			t.Fatalf("a quiet moment: %+v, want an empty window at its instant", w)
		}
	}
	idle := NewTally(0, 10*time.Second)
	feed(idle, Write, 0, 1000*ms, fast, nil)
	quiet := []Event{{At: 5000 * ms}}
	Windows(quiet, idle, WindowOptions{})
	if quiet[0].Write != nil || quiet[0].Read != nil {
		t.Fatalf("nothing sent near the event: %+v %+v", quiet[0].Write, quiet[0].Read)
	}
}

// TestTallyBounds: requests intended outside the tally are ignored, a nil
// tally records nothing, and a long timeline keeps at most MaxBuckets
// slices.
func TestTallyBounds(t *testing.T) {
	tl := NewTally(1000, time.Second)
	tl.Completed(Write, 999, 5)
	tl.Failed(Read, 1000+int64(2*time.Second), 5)
	var none *Tally
	none.Completed(Write, 0, 1)
	none.Failed(Write, 0, 1)
	Windows([]Event{{At: 0}}, none, WindowOptions{})
	long := NewTally(0, 24*time.Hour)
	if long.n > MaxBuckets {
		t.Fatalf("%d slices", long.n)
	}
}

// TestCompletedDoesNotAllocate: the per-request record is allocation-free.
func TestCompletedDoesNotAllocate(t *testing.T) {
	tl := NewTally(0, time.Second)
	if n := testing.AllocsPerRun(1000, func() { tl.Completed(Read, 5*ms, 77) }); n != 0 {
		t.Fatalf("%v allocations per Completed", n)
	}
}
