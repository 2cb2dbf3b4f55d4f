package serverinfo

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
)

// LatencyEvent is one sample of the server's latency monitor (LATENCY
// HISTORY): an operation of the server's own that took Ms milliseconds at
// the Unix second At — a fork, an AOF fsync, an expire cycle, a slow
// command. Redis records them only while latency-monitor-threshold is
// above zero, and only those at or above it; pacer reads the setting and
// never changes it.
type LatencyEvent struct {
	Event string `json:"event"`
	At    int64  `json:"at_unix_s"`
	Ms    int64  `json:"ms"`
}

// CPU is the server's own CPU time during a test, as INFO cpu counts it
// (used_cpu_user and used_cpu_sys, seconds, every thread of the server).
type CPU struct {
	UserS float64 `json:"user_s"`
	SysS  float64 `json:"sys_s"`
}

// maxEvents bounds the latency events kept for a test (the server keeps
// at most 160 samples of each).
const maxEvents = 256

// cpuTimes is INFO cpu's used_cpu_user and used_cpu_sys.
type cpuTimes struct {
	user, sys float64
	ok        bool
}

// parseCPU reads INFO cpu.
func parseCPU(text string) cpuTimes {
	m := parseInfo(text)
	u, errU := strconv.ParseFloat(m["used_cpu_user"], 64)
	s, errS := strconv.ParseFloat(m["used_cpu_sys"], 64)
	return cpuTimes{user: u, sys: s, ok: errU == nil && errS == nil && u >= 0 && s >= 0}
}

// cpuSince is the CPU the server spent between two readings (nil when
// either is missing or the counters went down: a restart).
func cpuSince(before, after cpuTimes) *CPU {
	if !before.ok || !after.ok || after.user < before.user || after.sys < before.sys {
		return nil
	}
	return &CPU{UserS: round(after.user-before.user, 6), SysS: round(after.sys-before.sys, 6)}
}

// latestEvent is one line of LATENCY LATEST: the event's name and the
// Unix second of its latest sample.
type latestEvent struct {
	name string
	at   int64
}

// parseLatest reads LATENCY LATEST: an array of [event, latest unix
// time, latest ms, max ms, …].
func parseLatest(v conn.Value) []latestEvent {
	var out []latestEvent
	for _, e := range v.Elems {
		if len(e.Elems) < 2 || e.Elems[0].Str == "" || len(out) >= maxEvents {
			continue
		}
		out = append(out, latestEvent{name: e.Elems[0].Str, at: e.Elems[1].Int})
	}
	return out
}

// parseHistory reads LATENCY HISTORY event: an array of [unix time, ms]
// pairs, keeping those at or after from.
func parseHistory(event string, v conn.Value, from int64) []LatencyEvent {
	var out []LatencyEvent
	for _, e := range v.Elems {
		if len(e.Elems) < 2 {
			continue
		}
		at, ms := e.Elems[0].Int, e.Elems[1].Int
		if at >= from && ms >= 0 {
			out = append(out, LatencyEvent{Event: event, At: at, Ms: ms})
		}
	}
	return out
}

// eventSlack is how far before a test's start a latency event may be
// dated and still count as the test's: the monitor's clock is whole
// seconds, and the test's start may fall late in the second an event
// ended in.
const eventSlack = 1

// latencyEvents asks the server's latency monitor for the events since
// the Unix second from: LATENCY LATEST, then the history of each event
// whose latest sample is that recent. Nothing when the monitor is off or
// refused.
func (p *Prober) latencyEvents(ctx context.Context, from int64) []LatencyEvent {
	if !p.latencyMonitor || p.latencyRefused {
		return nil
	}
	a, err := p.do(ctx, []string{"LATENCY", "LATEST"})
	if err != nil || len(a) == 0 {
		return nil
	}
	if a[0].Err != nil {
		p.latencyRefused = true
		return nil
	}
	var names []string
	for _, e := range parseLatest(a[0].Value) {
		if e.at >= from-eventSlack {
			names = append(names, e.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	cmds := make([][]string, len(names))
	for i, n := range names {
		cmds[i] = []string{"LATENCY", "HISTORY", n}
	}
	answers, _ := p.do(ctx, cmds...)
	var out []LatencyEvent
	for i, ans := range answers {
		if i < len(names) && ans.Err == nil {
			out = append(out, parseHistory(names[i], ans.Value, from-eventSlack)...)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].At != out[j].At {
			return out[i].At < out[j].At
		}
		return out[i].Event < out[j].Event
	})
	if len(out) > maxEvents {
		out = out[len(out)-maxEvents:]
	}
	return out
}

// Worst is the event of s that took longest (ok false: none).
func (s *Stats) Worst() (LatencyEvent, bool) {
	if s == nil || len(s.LatencyEvents) == 0 {
		return LatencyEvent{}, false
	}
	w := s.LatencyEvents[0]
	for _, e := range s.LatencyEvents[1:] {
		if e.Ms > w.Ms {
			w = e
		}
	}
	return w, true
}

// String words an event: "aof-fsync-always 40 ms at 12:00:01".
func (e LatencyEvent) String() string {
	return e.Event + " " + strconv.FormatInt(e.Ms, 10) + " ms at " + time.Unix(e.At, 0).UTC().Format("15:04:05") + " UTC"
}

// monitorThreshold reads CONFIG GET latency-monitor-threshold's value in
// milliseconds (ok false: not a number).
func monitorThreshold(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil && n >= 0
}
