package scheduler

import (
	"context"
	"time"
)

// DefaultDrain is how long an open run waits for the last replies.
const DefaultDrain = 5 * time.Second

// DefaultInterruptDrain is how long a run waits for the replies in flight
// after it is interrupted: the bound on how long Ctrl-C takes.
const DefaultInterruptDrain = 2 * time.Second

// DefaultLagLimit is the send-lag p99 a healthy generator stays under: 1 ms
// with precise and auto pacing, 2 ms with coarse pacing (whose wake quantum
// alone is about 1 ms).
func DefaultLagLimit(p Pacing) time.Duration {
	if p == Coarse {
		return 2 * time.Millisecond
	}
	return time.Millisecond
}

// DrainLimit is how long a run waits for what is still on its way once
// its requests are sent: drain (DefaultDrain when 0), and at most
// DefaultInterruptDrain when ctx was cancelled.
func DrainLimit(ctx context.Context, drain time.Duration) time.Duration {
	if drain <= 0 {
		drain = DefaultDrain
	}
	if ctx.Err() != nil {
		drain = min(drain, DefaultInterruptDrain)
	}
	return drain
}
