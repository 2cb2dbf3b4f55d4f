package bench

import (
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/timeline"
)

// MaxThreads caps --threads, as redis-benchmark does.
const MaxThreads = 500

// KeepAliveWarning is redis-benchmark's warning for -k 0.
const KeepAliveWarning = "WARNING: Keepalive disabled. You probably need " +
	"'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux and " +
	"'sudo sysctl -w net.inet.tcp.msl=1000' for Mac OS X in order " +
	"to use a lot of clients/requests"

// Flags are bench's own flags as given (-n, -P, -k, --precision,
// --threads, --rate, --latency, --repeat, -l, -I, --cluster). Parse
// applies redis-benchmark's quirks: where it clamps a value, so does
// pacer; where pacer cannot do what is asked, the flag is a usage error.
type Flags struct {
	Requests, Pipeline, KeepAlive, Precision, Threads, Repeat int
	// Rate is --rate (nil: not given).
	Rate                          *string
	Latency                       string
	Loop, Idle, Cluster, Embedded bool
}

// Settings are what Parse read beyond the Config.
type Settings struct {
	// KeepAlive is -k as redis-benchmark reads it: 0 or 1.
	KeepAlive int
	// Threads is --threads, clamped to 0 … MaxThreads.
	Threads int
	// Warnings are redis-benchmark's, for stderr.
	Warnings []string
}

// Parse checks the flags into cfg (Requests, Pipeline, Reconnect,
// Precision, Rate, Latency, Repeat, Loop) and returns the rest.
func (f Flags) Parse(cfg *Config) (Settings, error) {
	var s Settings
	if cfg.Requests = f.Requests; cfg.Requests < 1 {
		return s, usage.Flagf("n", "{n} %d: want at least one request", cfg.Requests)
	}
	// redis-benchmark clamps -P to at least 1, and takes any -k but 0 as 1.
	cfg.Pipeline = max(f.Pipeline, 1)
	if f.KeepAlive != 0 {
		s.KeepAlive = 1
	}
	cfg.Reconnect, cfg.Loop = s.KeepAlive == 0, f.Loop
	if f.Cluster {
		switch {
		case f.Embedded:
			return s, usage.Flagf("cluster", "{cluster} needs a Redis Cluster: {embedded} is a single server")
		case f.Idle:
			return s, usage.Flagf("cluster", "{cluster} with {I} is not supported")
		case s.KeepAlive == 0:
			return s, usage.Flagf("cluster", "{cluster} with {k} 0 is not supported: connections stay open")
		}
	}
	// --precision is HdrHistogram's significant digits: redis-benchmark
	// takes a negative value as its default 3 and caps it at 4.
	cfg.Precision = f.Precision
	if cfg.Precision < 0 {
		cfg.Precision = 3
	}
	cfg.Precision = min(max(cfg.Precision, 1), 4)
	s.Threads = min(max(f.Threads, 0), MaxThreads)
	if f.Threads > MaxThreads {
		s.Warnings = append(s.Warnings, "WARNING: Too many threads, limiting threads to 500.")
	}
	if f.Rate != nil {
		var err error
		if cfg.Rate, err = timeline.ParseRate(*f.Rate); err != nil {
			return s, usage.Flagf("rate", "{rate}: %v", err)
		}
	}
	switch f.Latency {
	case "first-reply":
		cfg.Latency = closedloop.FirstReply
	case "per-reply":
		cfg.Latency = closedloop.PerReply
	default:
		return s, usage.Flagf("latency", "{latency} %q: want first-reply or per-reply", f.Latency)
	}
	if cfg.Repeat = f.Repeat; cfg.Repeat > 1 && cfg.Loop {
		return s, usage.Flagf("repeat", "{repeat} %d cannot be combined with {l}: {l} already repeats the tests", cfg.Repeat)
	}
	return s, nil
}
