package openloop

import (
	"errors"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// An open run's events (package events): the tally of what went well and
// what went bad in each slice of the timeline, per class (writes, reads),
// and the notes of what the run saw happen to the topology. Recording a
// completion is on the hot path and allocates nothing; failures and notes
// are rare.

// beginEvents starts the run's event log and the tally at t0, the
// timeline's start.
func (run *openRun) beginEvents(t0 int64) {
	if !run.cfg.Events {
		return
	}
	run.outcomes.Store(events.NewTally(t0, time.Duration(run.span)))
	if run.cfg.Attach != nil {
		run.cfg.Attach(run.events)
	}
}

// classOf is the tally class of a command kind: a read when cfg.Reads
// says so, else a write.
func (run *openRun) classOf(kind uint32) int {
	if k := int(kind & kindMask); k < len(run.cfg.Reads) && run.cfg.Reads[k] {
		return events.Read
	}
	return events.Write
}

// tallyDone records e, answered response ns after its intended time.
func (run *openRun) tallyDone(e *conn.Entry, response int64) {
	if t := run.outcomes.Load(); t != nil {
		t.Completed(run.classOf(e.Kind), e.Intended, response)
	}
}

// tallyFailed records a request of kind intended at intended that failed
// after waiting age ns (0: never sent).
func (run *openRun) tallyFailed(intended int64, kind uint32, age int64) {
	if t := run.outcomes.Load(); t != nil {
		t.Failed(run.classOf(kind), intended, age)
	}
}

// droppedLate records a request the pacer dropped for being more than
// MaxBacklog late: its command was never drawn, so neither class knows
// whether it would have read; both count it.
func (run *openRun) droppedLate(intended int64) {
	if t := run.outcomes.Load(); t != nil {
		t.Failed(events.Write, intended, 0)
		t.Failed(events.Read, intended, 0)
	}
}

// note passes n to the run's event log, if any.
func (run *openRun) note(n events.Note) { run.events.Note(n) }

// replyError tallies and notes an error reply of lane h: a reply that says
// the node cannot serve now is a failure, noted as such; any other the
// server answered.
func (h *replies) replyError(e *conn.Entry, r conn.Reply, response int64) {
	run := h.run
	if run.events == nil {
		return
	}
	code := events.TopologyError(r.Text)
	if code == "" {
		run.tallyDone(e, response)
		return
	}
	run.tallyFailed(e.Intended, e.Kind, response)
	run.note(events.Note{Kind: events.Errors, At: nanotime(), Node: h.lane.addr, Code: code, Seen: code,
		Detail: h.lane.addr + " answered " + scheduler.ErrorText(r.Text[:min(len(r.Text), 120)])})
}

// tallyLeft records what a closed connection left: its unanswered
// requests failed at end, its unwritten ones were never sent.
func (run *openRun) tallyLeft(c *conn.Conn, end int64) {
	t := run.outcomes.Load()
	if t == nil {
		return
	}
	c.Unanswered(func(e *conn.Entry) {
		if e.Kind&noRequest == 0 && !run.warm(e) {
			t.Failed(run.classOf(e.Kind), e.Intended, end-e.Intended)
		}
	})
	c.Unsent(func(e *conn.Entry) {
		if e.Kind&noRequest == 0 && !run.warm(e) {
			t.Failed(run.classOf(e.Kind), e.Intended, 0)
		}
	})
}

// noteLost notes that lane s's connection c ended with lost of its
// requests (errors and timeouts): lost, or timed out (--timeout).
func (run *openRun) noteLost(s *lane, c *conn.Conn, lost uint64) {
	if run.events == nil {
		return
	}
	n := events.Note{Kind: events.Connection, At: nanotime(), Node: s.addr, Seen: "connection lost", Detail: "connection to " + s.addr + " lost"}
	if err := c.Err(); err != nil {
		n.Detail += ": " + err.Error()
		if isTimeout(err) {
			n.Seen, n.Detail = "timed out", "a connection to "+s.addr+" timed out (--timeout)"
		}
	}
	if lost > 0 {
		n.Code, n.N = n.Seen, lost
	}
	run.note(n)
}

// noteBack notes that lane s has a connection again after losing one.
func (run *openRun) noteBack(s *lane) {
	run.note(events.Note{Kind: events.Connection, At: nanotime(), Node: s.addr, Seen: "reconnected", Closes: true})
}

// isTimeout reports an error of a connection that --timeout ended.
func isTimeout(err error) bool { return errors.Is(err, conn.ErrTimeout) }

// finishEvents puts the run's events in res with their windows, as
// offsets from T0.
func (run *openRun) finishEvents(res *scheduler.Result) {
	l := run.events
	if l == nil {
		return
	}
	if run.cfg.Attach != nil {
		run.cfg.Attach(nil)
	}
	evs, dropped := l.Events()
	bound := run.cfg.EventBound
	if bound <= 0 {
		bound = events.DefaultBound(time.Duration(histo.Summarize(res.Response).P50 * 1e6))
	}
	events.Windows(evs, run.outcomes.Load(), events.WindowOptions{Bound: bound, Gap: eventGap(res.TargetRate)})
	res.EventBound, res.EventsDropped = bound, dropped
	for _, e := range evs {
		res.Events = append(res.Events, e.Shift(-res.T0))
	}
}

// eventGap is the longest stretch without a bad request inside one
// window: events.DefaultGap, or at low rates the time twenty requests
// take, so that a slow trickle of failures is one window.
func eventGap(r timeline.Rate) time.Duration {
	if ps := r.PerSecond(); ps > 0 {
		return max(events.DefaultGap, time.Duration(20/ps*float64(time.Second)))
	}
	return events.DefaultGap
}
