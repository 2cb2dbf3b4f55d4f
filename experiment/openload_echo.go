package experiment

import "time"

// Echo is the open load's keys in a run's echoed config (pacing,
// max_inflight, max_buffer, drain_s) with the timeline's warmup_s; the
// command adds its own.
func (l OpenLoad) Echo(warmup time.Duration) map[string]any {
	return map[string]any{"pacing": l.Pacing.String(), "max_inflight": l.MaxInflight, "max_buffer": l.MaxBuffer,
		"drain_s": l.Drain.Seconds(), "warmup_s": warmup.Seconds()}
}
