package openloop

import (
	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/events"
)

// A cluster run's events: the MOVED and ASK replies the readers hand over
// (slots that changed hands, or are moving), CLUSTERDOWN and TRYAGAIN,
// and what a refreshed slot map changed from the last one applied: slots
// that moved, a replica that took its primary's slots (a failover), a
// primary that joined. Rare; they may allocate.

// noteRedirect notes a -MOVED or -ASK that lane h's node sent for red's
// slot (on the reader's goroutine).
func (run *openRun) noteRedirect(h *replies, red cluster.Redirect) {
	if run.events == nil {
		return
	}
	code, what := "MOVED", " moved to "
	if red.Ask {
		code, what = "ASK", " moving to "
	}
	from := h.lane.addr
	to := red.Target(from)
	run.note(events.Note{Kind: events.SlotsMoved, At: nanotime(), Node: from, To: to, Slots: []events.SlotRange{{Lo: red.Slot, Hi: red.Slot}},
		Code: code, Seen: code, Detail: "slots of " + from + what + to})
}

// noteRetry notes a -CLUSTERDOWN or -TRYAGAIN of lane h's node.
func (run *openRun) noteRetry(h *replies, code string) {
	if run.events == nil {
		return
	}
	run.note(events.Note{Kind: events.Errors, At: nanotime(), Node: h.lane.addr, Code: code, Seen: code,
		Detail: h.lane.addr + " answered " + code})
}

// noteRefresh notes what the refreshed map t changes from the last one
// the run applied, and keeps t as the last.
func (p *pacer) noteRefresh(t *cluster.Topology) {
	cl, run := p.cl, p.run
	defer func() { cl.last = t }()
	if run.events == nil {
		return
	}
	now := nanotime()
	for _, c := range cluster.Diff(cl.last, t) {
		var slots []events.SlotRange
		for _, r := range c.Slots {
			slots = append(slots, events.SlotRange{Lo: r[0], Hi: r[1]})
		}
		n := events.Note{Kind: events.SlotsMoved, At: now, Node: c.From, To: c.To, Slots: slots, Seen: "slot map changed",
			Detail: "slots of " + orNobody(c.From) + " now served by " + orNobody(c.To)}
		if c.Promoted {
			n.Kind, n.Seen = events.Failover, "replica took over"
			n.Detail = c.To + ", a replica of " + c.From + ", serves its slots"
		}
		run.note(n)
	}
}

// noteJoin notes a primary that joined the run.
func (run *openRun) noteJoin(addr string) {
	run.note(events.Note{Kind: events.Topology, At: nanotime(), Node: addr, Seen: "node joined", Detail: addr + " joined: a primary not in the first slot map"})
}

func orNobody(addr string) string {
	if addr == "" {
		return "nobody"
	}
	return addr
}
