package replay

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/timeline"
)

// Flags are pacer replay's own flags as given, and its arguments; the
// target's, the output's and the open loop's load flags are read with
// every other command's. Set reports whether a flag was given.
type Flags struct {
	Args                                         []string
	Format, Allow, Skip, KeyPrefix, Speed, Rate  string
	DB, Loop                                     int
	ScriptCommands, PerClient, Cluster, Embedded bool
	Duration, Warmup                             time.Duration
	Requests                                     int64
	Set                                          func(name string) bool
}

// Options are a validated replay: the trace's Config (but Conns, which
// is -c) and the measured part of its timeline.
type Options struct {
	Config
	// Duration is the measured part of the timeline (0: the whole trace),
	// Requests the measured requests (0: no bound), Warmup the leading
	// part not measured.
	Duration time.Duration
	Requests uint64
	Warmup   time.Duration
}

// Parse checks the flags in the order the user reads them (the trace,
// its format and filters, its scale, then the bounds) and returns the
// replay they ask for; a bad one is a usage error in the flag's words.
func (f Flags) Parse() (Options, error) {
	var o Options
	switch len(f.Args) {
	case 1:
	case 0:
		return o, usage.Errorf("replay needs a TRACE file: redis-cli monitor output or pacer's JSON lines")
	default:
		if last := f.Args[len(f.Args)-1]; len(last) > 1 && last[0] == '-' {
			return o, usage.Errorf("flag needs an argument: %s", last)
		}
		return o, usage.Errorf("replay takes one TRACE file (pacer replay [flags] TRACE); got %d arguments", len(f.Args))
	}
	o.Path = f.Args[0]
	if o.Cluster = f.Cluster; o.Cluster && f.Embedded {
		return o, usage.Flagf("cluster", "{cluster} needs a Redis Cluster: {embedded} is a single server")
	}
	var err error
	if o.Format, err = scenarios.ParseTraceFormat(f.Format); err != nil {
		return o, usage.Flagf("format", "{format}: %v", err)
	}
	if o.Policy, err = scenarios.ParsePolicy(f.Allow, f.Skip); err != nil {
		return o, usage.Errorf("%w", err)
	}
	o.ScriptCommands, o.KeyPrefix, o.PerClient = f.ScriptCommands, f.KeyPrefix, f.PerClient
	if f.Set("key-prefix") && o.KeyPrefix == "" {
		return o, usage.Flagf("key-prefix", "{key-prefix}: want a non-empty prefix")
	}
	if o.DBSet = f.Set("db"); o.DBSet {
		if o.DB = f.DB; o.DB < 0 {
			return o, usage.Flagf("db", "{db} %d: must not be negative", o.DB)
		}
	}
	if f.Set("speed") && f.Set("rate") {
		return o, usage.Flagf("rate", "{rate} and {speed} both scale the trace: give one")
	}
	if f.Set("rate") {
		r, err := timeline.ParseRate(f.Rate)
		if err != nil {
			return o, usage.Flagf("rate", "{rate}: %v", err)
		}
		o.Rate = r.PerSecond()
	} else if o.Speed, err = parseSpeed(f.Speed); err != nil {
		return o, err
	}
	o.Loops = f.Loop
	return o, f.bounds(&o)
}

// bounds reads --duration, -n and --warmup.
func (f Flags) bounds(o *Options) error {
	if o.Duration = f.Duration; f.Set("duration") && o.Duration <= 0 {
		return usage.Flagf("duration", "{duration} %s: want a positive duration such as 10s or 2m", o.Duration)
	}
	if n := f.Requests; f.Set("n") {
		if n <= 0 {
			return usage.Flagf("n", "{n} %d: want a positive number of requests", n)
		}
		o.Requests = uint64(n)
	}
	if o.Warmup = f.Warmup; o.Warmup < 0 || f.Set("warmup") && o.Warmup == 0 {
		return usage.Flagf("warmup", "{warmup} %s: want a positive duration such as 5s", o.Warmup)
	}
	if o.Duration > 0 && o.Warmup > math.MaxInt64-o.Duration {
		return usage.Flagf("warmup", "{warmup} %s: too long", o.Warmup)
	}
	return nil
}

// parseSpeed reads --speed: a positive factor, with or without an x (2,
// 2x, 0.5, 1.5X), at most MaxSpeed (the cap --rate's speed has too).
func parseSpeed(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "x"), "X"), 64)
	switch {
	case err == nil && v > MaxSpeed && !math.IsInf(v, 0):
		return 0, usage.Flagf("speed", "{speed} %q: at most %g× (a faster replay sends the trace all at once)", s, float64(MaxSpeed))
	case err != nil || !(v > 0) || math.IsInf(v, 0) || v > MaxSpeed:
		return 0, usage.Flagf("speed", "{speed} %q: want a positive factor such as 1, 2x or 0.5", s)
	}
	return v, nil
}
