package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
)

// openOnly are the flags of an open sweep, refused by a closed one.
var openOnly = []string{"rates", "from", "to", "step", "search", "settle", "abort-after", "max-steps", "precision", "arrival", "pacing", "max-inflight", "max-backlog", "lag-limit", "timeout"}

// SetConns reads an open sweep's -c: one number of connections, from 1
// to most. pipelined says -P was given, which only a closed sweep takes.
func (c *Config) SetConns(conns string, pipelined bool, most int) error {
	if pipelined {
		return usage.Flagf("P", "{P} belongs to a closed sweep: add {closed}")
	}
	n, err := strconv.Atoi(strings.TrimSpace(conns))
	if err != nil || n < 1 || n > most {
		return usage.Flagf("c", "{c} %q: want 1 to %d connections (a list needs {closed})", conns, most)
	}
	c.Conns = n
	return nil
}

// SetClosed reads a closed sweep's points: the lists of -c (each from 1
// to most connections) and -P, and --drain (0: as short as can be). set
// says whether a flag was given: an open sweep's flags are refused.
func (c *Config) SetClosed(clients, pipelines string, drain time.Duration, set func(string) bool, most int) error {
	for _, name := range openOnly {
		if set(name) {
			return usage.Flagf(name, "%v belongs to an open sweep: drop it or {closed}", usage.Name(name))
		}
	}
	var err error
	if c.Clients, err = parseInts(clients, 1, most); err != nil {
		return usage.Flagf("c", "{c} %q: want a list of 1 to %d connections, such as 10,50,100,200", clients, most)
	}
	if c.Pipelines, err = parseInts(pipelines, 1, 1<<20); err != nil {
		return usage.Flagf("P", "{P} %q: want a list of batch sizes, such as 1,16,64", pipelines)
	}
	if c.Drain = drain; c.Drain <= 0 {
		c.Drain = time.Nanosecond
	}
	return nil
}

// parseInts reads "10,50,100" with every value in [lo, hi].
func parseInts(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("bad value %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Echo is the sweep's own keys of the result document's configuration:
// its kind, its step's length and repeats, and a closed sweep's points or
// an open sweep's rates (or search), arrivals, pacing and timings.
func (c *Config) Echo(closed bool) map[string]any {
	extra := map[string]any{
		"sweep":           map[bool]string{false: "open", true: "closed"}[closed],
		"step_duration_s": c.StepDuration.Seconds(),
		"repeat":          c.Repeat,
	}
	if closed {
		extra["clients"], extra["pipelines"] = c.Clients, c.Pipelines
		return extra
	}
	extra["arrival"], extra["pacing"], extra["settle_s"] = c.Arrival, c.Open.Pacing.String(), c.Settle.Seconds()
	extra["abort_after_s"], extra["drain_s"] = c.AbortAfter.Seconds(), c.Drain.Seconds()
	if c.Search {
		extra["search"] = map[string]any{"from": c.From, "to": c.To, "precision": c.Precision, "max_steps": c.MaxSteps}
	} else {
		extra["rates"] = c.Rates
	}
	return extra
}
