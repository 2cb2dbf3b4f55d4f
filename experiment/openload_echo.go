package experiment

import (
	"time"

	"github.com/pacer-load/pacer/scheduler/openloop"
)

// Echo is the open load's keys in a run's echoed config (pacing,
// max_inflight, max_buffer, drain_s) with the timeline's warmup_s, and
// read_from, visibility and wait when they were asked for; the command
// adds its own.
func (l OpenLoad) Echo(warmup time.Duration) map[string]any {
	m := map[string]any{"pacing": l.Pacing.String(), "max_inflight": l.MaxInflight, "max_buffer": l.MaxBuffer,
		"drain_s": l.Drain.Seconds(), "warmup_s": warmup.Seconds()}
	l.echoTopology(m)
	return m
}

// echoTopology adds the replicas' settings to m: read_from, visibility
// (probes per second) and wait (replicas, timeout_ms), when set.
func (l OpenLoad) echoTopology(m map[string]any) {
	if l.ReadFrom != openloop.ReadPrimary {
		m["read_from"] = l.ReadFrom.String()
	}
	if l.Visibility > 0 {
		m["visibility"] = l.Visibility
	}
	if w := l.Wait; w != nil {
		m["wait"] = map[string]any{"replicas": w.Replicas, "timeout_ms": w.Timeout.Milliseconds()}
	}
}
