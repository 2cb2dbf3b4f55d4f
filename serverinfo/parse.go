package serverinfo

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/conn"
)

// Bounds on what is kept of a server's words: INFO values and CONFIG
// values are short; anything longer is not what it claims to be.
const (
	maxInfoValue   = 256
	maxConfigValue = 1024
	// maxCommands bounds the commands kept from INFO commandstats and
	// LATENCY HISTOGRAM (Redis has about 240, subcommands included).
	maxCommands = 1024
	// maxBuckets bounds one command's LATENCY HISTOGRAM buckets (Redis
	// has at most about 30).
	maxBuckets = 64
)

// parseInfo reads INFO's "key:value" lines; section headers ("# Server")
// and blank lines are skipped, values longer than maxInfoValue dropped.
func parseInfo(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == "" || l[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || len(v) > maxInfoValue {
			continue
		}
		m[k] = v
	}
	return m
}

// counter is one command's line of INFO commandstats.
type counter struct{ calls, usec uint64 }

// parseCommandstats reads INFO commandstats: lines such as
// "cmdstat_get:calls=2,usec=5,usec_per_call=2.50,rejected_calls=0,failed_calls=0"
// (Redis, Valkey, KeyDB, Dragonfly). Names are lower-cased ("config|get"
// stays as Redis 7 names subcommands).
func parseCommandstats(text string) map[string]counter {
	out := map[string]counter{}
	for k, v := range parseInfo(text) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok || name == "" || len(out) >= maxCommands {
			continue
		}
		var c counter
		var haveCalls bool
		for _, f := range strings.Split(v, ",") {
			fk, fv, _ := strings.Cut(f, "=")
			n, err := strconv.ParseUint(fv, 10, 64)
			if err != nil {
				continue
			}
			switch fk {
			case "calls":
				c.calls, haveCalls = n, true
			case "usec":
				c.usec = n
			}
		}
		if haveCalls {
			out[strings.ToLower(name)] = c
		}
	}
	return out
}

// parseKeyspace sums the keys of INFO keyspace's "db0:keys=1,expires=0,avg_ttl=0" lines.
func parseKeyspace(text string) (uint64, bool) {
	var sum uint64
	found := false
	for k, v := range parseInfo(text) {
		if ok, _ := path.Match("db[0-9]*", k); !ok {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if n, ok := strings.CutPrefix(f, "keys="); ok {
				if k, err := strconv.ParseUint(n, 10, 64); err == nil {
					sum += k
					found = true
				}
			}
		}
	}
	return sum, found || strings.Contains(text, "# Keyspace")
}

// cumulative is one command's LATENCY HISTOGRAM: calls, and the count of
// calls at or below each bucket's bound in microseconds, bounds ascending.
type cumulative struct {
	calls  uint64
	bounds []uint64
	cum    []uint64
}

// at is the count of calls at or below b.
func (c cumulative) at(b uint64) uint64 {
	i := sort.Search(len(c.bounds), func(i int) bool { return c.bounds[i] > b })
	if i == 0 {
		return 0
	}
	return c.cum[i-1]
}

// parseLatencyHistogram reads LATENCY HISTOGRAM's reply, a map (a flat
// array in RESP2) of command name to a map of "calls" and
// "histogram_usec", itself a map of bucket bound to cumulative count:
//
//	get => {calls => 20001, histogram_usec => {1 => 19993, 2 => 19996, 4 => 20000, 66 => 20001}}
//
// Anything else is ignored.
func parseLatencyHistogram(v conn.Value) map[string]cumulative {
	out := map[string]cumulative{}
	pairs := v.Elems
	for i := 0; i+1 < len(pairs) && len(out) < maxCommands; i += 2 {
		name := strings.ToLower(pairs[i].Str)
		fields := pairs[i+1].Elems
		var c cumulative
		ok := false
		for j := 0; j+1 < len(fields); j += 2 {
			switch fields[j].Str {
			case "calls":
				c.calls = uint64(max(fields[j+1].Int, 0))
			case "histogram_usec":
				ok = true
				h := fields[j+1].Elems
				for k := 0; k+1 < len(h) && len(c.bounds) < maxBuckets; k += 2 {
					b, n := h[k].Int, h[k+1].Int
					if b < 0 || n < 0 || len(c.bounds) > 0 && (uint64(b) <= c.bounds[len(c.bounds)-1] || uint64(n) < c.cum[len(c.cum)-1]) {
						ok = false // not ascending, not cumulative: not a histogram we understand
						break
					}
					c.bounds = append(c.bounds, uint64(b))
					c.cum = append(c.cum, uint64(n))
				}
			}
		}
		if ok && name != "" {
			out[name] = c
		}
	}
	return out
}

// configValue is CONFIG GET's answer for one parameter: a name/value
// pair (an array in RESP2, a map in RESP3), or nothing when the server
// has no such parameter.
func configValue(v conn.Value) (string, bool) {
	if len(v.Elems) != 2 || len(v.Elems[1].Str) > maxConfigValue {
		return "", false
	}
	return v.Elems[1].Str, true
}
