package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
)

// connsEvery is how often the connection watcher looks: at most one line
// a second, however often connections drop.
const connsEvery = time.Second

// watchConnections says on stderr when an open run's connections drop,
// with how many are open and how many were replaced so far, and when a
// Redis Cluster primary joins the run (the cluster scaled out), until the
// returned stop is called. A run whose connections all went and never came
// back ends as target_lost (exit 1), said by judge.
func watchConnections(stderr io.Writer, label string, live <-chan *scheduler.Live) (stop func()) {
	var seen uint64
	joins := 0
	check := func(l *scheduler.Live) {
		for _, j := range l.Joins(joins) {
			fmt.Fprintln(stderr, joinLine(label, l.Progress().Elapsed, j))
			joins++
		}
		c, ok := l.Connections()
		if !ok || c.Lost <= seen {
			return
		}
		fmt.Fprintln(stderr, connectionsLine(label, l.Progress().Elapsed, c, c.Lost-seen))
		seen = c.Lost
	}
	return watchLive(live, connsEvery, nil, check, check)
}

// joinLine words a primary's joining the run.
func joinLine(label string, at time.Duration, j scheduler.NodeJoin) string {
	s := fmt.Sprintf("pacer: %s: cluster node %s joined the run by %.1f s", label, safetext.Escape(j.Addr), at.Seconds())
	if j.Open == 0 {
		why := "no connection opened"
		if j.Err != "" {
			why = safetext.Escape(oneLine(j.Err))
		}
		return s + fmt.Sprintf(" and could not be reached (%s); its requests are errors until a redial reaches it", why)
	}
	return s + fmt.Sprintf(": %d of %d connections open", j.Open, j.Of)
}

// connectionsLine words n new losses.
func connectionsLine(label string, at time.Duration, c scheduler.Connections, n uint64) string {
	what := "connection"
	if n > 1 {
		what = fmt.Sprintf("%d connections", n)
	}
	s := fmt.Sprintf("pacer: %s: %s lost by %.1f s; %d of %d open", label, what, at.Seconds(), c.Open, c.Of)
	if c.Reconnects > 0 {
		s += fmt.Sprintf(", %d replaced so far", c.Reconnects)
	}
	if c.Open == 0 {
		s += "; requests wait for a reconnect"
	}
	return s
}
