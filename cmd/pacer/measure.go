package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/host"
)

// maxHiccupInterval bounds --hiccup-interval: a meter sleeping longer
// samples too few wakes to say anything about a run.
const maxHiccupInterval = time.Second

// measureFlags are the flags of every command that measures latency: where
// a reply's arrival comes from and the host hiccup meter's interval.
func measureFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "receive-clock", Value: conn.ReceiveKernel, Usage: fmt.Sprintf("`CLOCK` of a reply's arrival: %s (the kernel's receive timestamp, where the socket has one; else the read) or %s (when a goroutine read it: its wake-up delay counts as the server's)", conn.ReceiveKernel, conn.ReceiveRead), Category: catTrust},
		&cli.DurationFlag{Name: "hiccup-interval", Value: host.DefaultInterval, Usage: "the host hiccup meter sleeps `DURATION` at a time and records how late it wakes (0: off)", Category: catTrust},
	}
}

// measureOptions reads measureFlags (absent on commands without them):
// the connections' receive clock and the hiccup meter's interval as the
// scheduler takes it (negative: off).
func measureOptions(c *cli.Context) (clock string, hiccups time.Duration, err error) {
	clock = c.String("receive-clock")
	switch clock {
	case "", conn.ReceiveKernel, conn.ReceiveRead:
	default:
		return "", 0, usageErrorf("--receive-clock %q: want %s or %s", clock, conn.ReceiveKernel, conn.ReceiveRead)
	}
	if !c.IsSet("hiccup-interval") {
		return clock, 0, nil
	}
	switch d := c.Duration("hiccup-interval"); {
	case d == 0:
		return clock, -1, nil
	case d < 100*time.Microsecond || d > maxHiccupInterval:
		return "", 0, usageErrorf("--hiccup-interval %s: want 0 (off) or 100µs to %s", d, maxHiccupInterval)
	default:
		return clock, d, nil
	}
}
