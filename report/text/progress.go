package text

import (
	"fmt"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
)

// ProgressLine words a running test's progress at now, since the line at
// last: elapsed (of its duration, or the share of its requests done),
// warmup, the target rate of stages, sent and completed rates, p50 and
// p99 of the interval (nanoseconds), requests in flight, the age of the
// oldest unanswered request (a stall shows while it happens) and errors.
func ProgressLine(label string, l *scheduler.Live, last, now scheduler.Progress, p50, p99 int64) string {
	dt := (now.Elapsed - last.Elapsed).Seconds()
	if dt <= 0 {
		dt = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %5.1fs", safetext.Line(label), now.Elapsed.Seconds())
	switch {
	case l.Duration > 0:
		fmt.Fprintf(&b, "/%.1fs", l.Duration.Seconds())
	case l.Requests > 0 && l.Requests < 1<<62:
		fmt.Fprintf(&b, " %3.0f%%", 100*float64(now.Completed+now.Errors)/float64(l.Requests))
	}
	if now.Elapsed < l.Warmup {
		b.WriteString(" warmup")
	}
	if l.Stages != nil {
		fmt.Fprintf(&b, "  target %.0f/s", l.Stages.RateAt(int64(now.Elapsed)))
	}
	fmt.Fprintf(&b, "  sent %.0f/s  completed %.0f/s  p50 %.3f ms  p99 %.3f ms  in-flight %d  oldest %s  errors %d",
		float64(now.Sent-last.Sent)/dt, float64(now.Completed-last.Completed)/dt,
		histo.Millis(p50), histo.Millis(p99), now.InFlight, age(now.OldestAge), now.Errors)
	return b.String()
}

// age words how long the oldest request has waited ("-": none).
func age(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// JoinLine words a Redis Cluster primary's joining an open run (the
// cluster scaled out) at, by the run's clock.
func JoinLine(label string, at time.Duration, j scheduler.NodeJoin) string {
	s := fmt.Sprintf("pacer: %s: cluster node %s joined the run by %.1f s", safetext.Line(label), safetext.Escape(j.Addr), at.Seconds())
	if j.Open == 0 {
		why := "no connection opened"
		if j.Err != "" {
			why = safetext.Line(j.Err)
		}
		return s + fmt.Sprintf(" and could not be reached (%s); its requests are errors until a redial reaches it", why)
	}
	return s + fmt.Sprintf(": %d of %d connections open", j.Open, j.Of)
}

// ConnectionsLine words n connections of an open run lost by at, with c
// the connections now.
func ConnectionsLine(label string, at time.Duration, c scheduler.Connections, n uint64) string {
	what := "connection"
	if n > 1 {
		what = fmt.Sprintf("%d connections", n)
	}
	s := fmt.Sprintf("pacer: %s: %s lost by %.1f s; %d of %d open", safetext.Line(label), what, at.Seconds(), c.Open, c.Of)
	if c.Reconnects > 0 {
		s += fmt.Sprintf(", %d replaced so far", c.Reconnects)
	}
	if c.Open == 0 {
		s += "; requests wait for a reconnect"
	}
	return s
}
