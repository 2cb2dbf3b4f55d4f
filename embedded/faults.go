package embedded

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
)

// Faults make the embedded server misbehave on purpose.
type Faults struct {
	// Stall freezes the whole server for Stall every Every (the first
	// freeze starts one Every after the server starts): nothing is
	// answered, as during a GC pause or a fork. Both zero: no stalls.
	Stall, Every time.Duration
	// Delay is extra service time per command (see Delay).
	Delay Delay
	// ErrorRate is the fraction of commands answered with an error reply
	// instead of being executed (0 to 1).
	ErrorRate float64
	// Seed makes delays and injected errors reproducible.
	Seed uint64
}

// Validate checks the fault settings.
func (f Faults) Validate() error {
	switch {
	case f.Stall < 0 || f.Every < 0:
		return usage.Option("stall", "{stall} and {every} must not be negative")
	case f.Stall > 0 && f.Every == 0:
		return usage.Option("stall", "{stall} needs {every} (how often the server stalls)")
	case f.Every > 0 && f.Stall == 0:
		return usage.Option("every", "{every} needs {stall} (how long each stall lasts)")
	case f.Stall > 0 && f.Stall >= f.Every:
		return usage.Option("stall", "{stall} %v must be shorter than {every} %v", f.Stall, f.Every)
	case f.ErrorRate < 0 || f.ErrorRate > 1 || math.IsNaN(f.ErrorRate):
		return usage.Option("error-rate", "{error-rate} %v: want a fraction from 0 to 1", f.ErrorRate)
	}
	return nil
}

// String describes the faults for banners and reports.
func (f Faults) String() string {
	var parts []string
	if f.Stall > 0 {
		parts = append(parts, fmt.Sprintf("stall %v every %v", f.Stall, f.Every))
	}
	if f.Delay.Kind != DelayNone {
		parts = append(parts, "delay "+f.Delay.String())
	}
	if f.ErrorRate > 0 {
		parts = append(parts, fmt.Sprintf("error rate %g", f.ErrorRate))
	}
	if len(parts) == 0 {
		return "no faults"
	}
	return strings.Join(parts, ", ")
}

// DelayKind is the shape of a service-time distribution.
type DelayKind int

// Delay distributions.
const (
	DelayNone    DelayKind = iota
	DelayFixed             // always A
	DelayExp               // exponential with mean A
	DelayUniform           // uniform in [A, B]
)

// Delay is a distribution of extra service time. The server executes
// commands one at a time, as Redis does, so a command's delay also delays
// every command queued behind it: the server's capacity is 1/mean.
type Delay struct {
	Kind DelayKind
	A, B time.Duration
}

// ParseDelay reads "200us" (fixed), "exp:200us" (exponential, mean 200 µs)
// or "uniform:100us-300us".
func ParseDelay(s string) (Delay, error) {
	bad := usage.Option("delay", "{delay} %q: want a duration (200us), exp:MEAN or uniform:MIN-MAX", s)
	kind, arg, hasKind := strings.Cut(s, ":")
	if !hasKind {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Delay{}, bad
		}
		if d == 0 {
			return Delay{}, nil
		}
		return Delay{Kind: DelayFixed, A: d}, nil
	}
	switch kind {
	case "exp":
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return Delay{}, bad
		}
		return Delay{Kind: DelayExp, A: d}, nil
	case "uniform":
		lo, hi, ok := strings.Cut(arg, "-")
		a, err1 := time.ParseDuration(lo)
		b, err2 := time.ParseDuration(hi)
		if !ok || err1 != nil || err2 != nil || a < 0 || b < a {
			return Delay{}, bad
		}
		return Delay{Kind: DelayUniform, A: a, B: b}, nil
	}
	return Delay{}, bad
}

// String prints the delay as ParseDelay reads it.
func (d Delay) String() string {
	switch d.Kind {
	case DelayFixed:
		return d.A.String()
	case DelayExp:
		return "exp:" + d.A.String()
	case DelayUniform:
		return "uniform:" + d.A.String() + "-" + d.B.String()
	}
	return "0s"
}

// draw returns one delay in nanoseconds from u, a uniform number in [0, 1).
func (d Delay) draw(u float64) int64 {
	switch d.Kind {
	case DelayFixed:
		return int64(d.A)
	case DelayExp:
		return int64(-math.Log(1-u) * float64(d.A))
	case DelayUniform:
		return int64(d.A) + int64(u*float64(d.B-d.A))
	}
	return 0
}

// isSetup reports whether a command sets a connection up or asks the
// server about itself rather than being part of the load: HELLO, AUTH,
// SELECT, CLIENT, a PING as the connection's first command (how pacer
// checks a new connection), and INFO, CONFIG and LATENCY (what pacer asks
// around each test). --error-rate spares them, so injected errors land on
// the workload, not on the handshake or the server's statistics.
func isSetup(args [][]byte, first bool) bool {
	switch {
	case is(args[0], "HELLO"), is(args[0], "AUTH"), is(args[0], "SELECT"), is(args[0], "CLIENT"),
		is(args[0], "INFO"), is(args[0], "CONFIG"), is(args[0], "LATENCY"):
		return true
	}
	return first && is(args[0], "PING")
}

// errInjected is the reply of a command hit by --error-rate.
const errInjected = "-ERR injected by pacer (--error-rate)\r\n"
