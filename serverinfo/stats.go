package serverinfo

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Identity is what the server says it is, and the settings that change
// results. It is the document-level "server" object of pacer.result/v1.
type Identity struct {
	// Available reports whether INFO answered; when it did not, Error says
	// why and the other fields are empty.
	Available bool `json:"available"`
	// Error says what was refused or failed (INFO, CONFIG GET), if
	// anything; several causes are joined with "; ".
	Error string `json:"error,omitempty"`
	// Name is the server's kind: "redis", "valkey", "dragonfly", "keydb",
	// "pacer-embedded", or another INFO server_name.
	Name string `json:"name,omitempty"`
	// Version is the server's own version (valkey_version,
	// dragonfly_version, …); for Redis and KeyDB, redis_version.
	Version string `json:"version,omitempty"`
	// RedisVersion is INFO's redis_version: the Redis version the server
	// claims compatibility with.
	RedisVersion string `json:"redis_version,omitempty"`
	// Mode is INFO's redis_mode or server_mode: standalone, cluster or
	// sentinel.
	Mode string `json:"mode,omitempty"`
	// ThreadCount is Dragonfly's thread_count (its threads serve
	// commands; Redis's io-threads only do I/O).
	ThreadCount string `json:"thread_count,omitempty"`
	// Config holds the CONFIG GET answers for save, appendonly,
	// io-threads and maxmemory-policy: a parameter the server does not
	// have, or refused to give, is absent.
	Config map[string]string `json:"config"`
	// Keys is the sum of INFO keyspace's keys over every database; nil
	// when the server did not say.
	Keys *uint64 `json:"keys"`
	// ConfigRefused is the server's refusal of CONFIG GET, if it refused
	// (managed services often do); it is part of Error.
	ConfigRefused string `json:"-"`
	// ProcessID is INFO server's process_id (0: not said): what confirms
	// the process pacer finds listening on a local target.
	ProcessID int `json:"process_id,omitempty"`
	// LatencyMonitorMs is CONFIG GET latency-monitor-threshold (nil: not
	// said): above 0 the server records its own latency events, which
	// each test then reads (Stats.LatencyEvents). pacer never sets it.
	LatencyMonitorMs *int64 `json:"latency_monitor_threshold_ms,omitempty"`
}

// ConfigNames are the CONFIG GET parameters Identity reads, in the order
// they are printed.
var ConfigNames = []string{"save", "appendonly", "io-threads", "maxmemory-policy"}

// Stats is what the server counted during one test: the difference of
// INFO commandstats and of LATENCY HISTOGRAM between just before the test
// and just after it. It is "tests[i].server" in pacer.result/v1.
//
// The server counts every client: other clients' commands during the test
// are included. pacer's own queries (one INFO, one LATENCY HISTOGRAM, an
// AUTH) are taken out of the calls.
type Stats struct {
	// Available reports whether INFO commandstats answered before and
	// after the test.
	Available bool `json:"available"`
	// Error says why not, or what went wrong (a statistics reset during
	// the test).
	Error string `json:"error,omitempty"`
	// Commands are the commands the server executed during the test, by
	// the server's lower-case name ("get", "config|get").
	Commands map[string]Command `json:"commands"`
	// Keys is the sum of INFO keyspace's keys after the test; nil when
	// the server did not say.
	Keys *uint64 `json:"keys"`
	// CPU is the server's own CPU time during the test (INFO cpu); nil
	// where it did not say.
	CPU *CPU `json:"cpu,omitempty"`
	// LatencyEvents are the server's latency monitor's samples dated
	// within the test (from a second before its start), oldest first:
	// present only while the server's latency-monitor-threshold is above
	// 0, and only for operations at or above it.
	LatencyEvents []LatencyEvent `json:"latency_events,omitempty"`
	// Nodes holds, for a Redis Cluster, each primary's own Stats by
	// address; the fields above are then their sum. The report puts each
	// on its node ("tests[i].nodes[k].server"), so it is not written here.
	Nodes map[string]*Stats `json:"-"`
}

// Command is one command's server-side time during a test.
type Command struct {
	// Calls and Usec are the differences of commandstats' calls and usec
	// (microseconds the server spent executing the command).
	Calls uint64 `json:"calls"`
	Usec  uint64 `json:"usec"`
	// UsecPerCall is Usec/Calls.
	UsecPerCall float64 `json:"usec_per_call"`
	// LatencyHistogram is the difference of LATENCY HISTOGRAM (Redis 7
	// and later); nil where the server has none or did not track this
	// command during the test.
	LatencyHistogram *Histogram `json:"latency_histogram"`
}

// Histogram is a command's LATENCY HISTOGRAM over the test: the server's
// own power-of-two buckets (1, 2, 4, 8, 16, 33, 66 … µs, as Redis rounds
// them), each with the calls that took at most its bound and more than
// the previous one. Percentiles are read from the buckets: p99_le_usec is
// the bound of the bucket holding the 99th percentile, so the true value
// lies between half of it and it.
type Histogram struct {
	Calls   uint64   `json:"calls"`
	Buckets []Bucket `json:"buckets"`
	P50     uint64   `json:"p50_le_usec"`
	P99     uint64   `json:"p99_le_usec"`
	Max     uint64   `json:"max_le_usec"`
}

// Bucket is one bucket of a Histogram: Count calls took at most LeUsec
// microseconds (and more than the previous bucket's bound).
type Bucket struct {
	LeUsec uint64 `json:"le_usec"`
	Count  uint64 `json:"count"`
}

// Percentile returns the bound of the bucket holding the p-th percentile
// (0 < p ≤ 100), or 0 for an empty histogram.
func (h *Histogram) Percentile(p float64) uint64 {
	if h == nil || h.Calls == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(h.Calls)))
	rank = max(rank, 1)
	var cum uint64
	for _, b := range h.Buckets {
		cum += b.Count
		if cum >= rank {
			return b.LeUsec
		}
	}
	return h.Buckets[len(h.Buckets)-1].LeUsec
}

// finish sets Calls and the percentiles from the buckets.
func (h *Histogram) finish() {
	h.Calls = 0
	for _, b := range h.Buckets {
		h.Calls += b.Count
	}
	h.P50, h.P99 = h.Percentile(50), h.Percentile(99)
	h.Max = 0
	for _, b := range h.Buckets {
		if b.Count > 0 {
			h.Max = b.LeUsec
		}
	}
}

// merge adds o's buckets to h's.
func (h *Histogram) merge(o *Histogram) {
	counts := map[uint64]uint64{}
	for _, b := range h.Buckets {
		counts[b.LeUsec] += b.Count
	}
	for _, b := range o.Buckets {
		counts[b.LeUsec] += b.Count
	}
	h.Buckets = h.Buckets[:0]
	for le, n := range counts {
		h.Buckets = append(h.Buckets, Bucket{LeUsec: le, Count: n})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].LeUsec < h.Buckets[j].LeUsec })
	h.finish()
}

// diffHistogram is after − before as a Histogram of the calls in between,
// or nil when none were tracked. ok is false when a count went down (the
// statistics were reset in between).
func diffHistogram(before, after cumulative) (h *Histogram, ok bool) {
	bounds := append(append([]uint64(nil), before.bounds...), after.bounds...)
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	h = &Histogram{}
	var prev uint64
	for i, b := range bounds {
		if i > 0 && b == bounds[i-1] {
			continue
		}
		a, z := after.at(b), before.at(b)
		if a < z {
			return nil, false
		}
		d := a - z
		if d < prev {
			return nil, false
		}
		if d > prev {
			h.Buckets = append(h.Buckets, Bucket{LeUsec: b, Count: d - prev})
		}
		prev = d
	}
	if len(h.Buckets) == 0 {
		return nil, true
	}
	h.finish()
	return h, true
}

// own are pacer's queries that the server counted between the two
// snapshots of a test, by command name: taken out of the calls.
type own map[string]uint64

// diff computes the Stats of a test from its two snapshots.
func diff(before, after *snapshot, mine own) *Stats {
	s := &Stats{Available: true, Commands: map[string]Command{}}
	reset := false
	for name, a := range after.commands {
		b := before.commands[name]
		if a.calls < b.calls || a.usec < b.usec {
			reset = true
			continue
		}
		c := Command{Calls: a.calls - b.calls, Usec: a.usec - b.usec}
		c.Calls -= min(c.Calls, mine[name])
		if c.Calls == 0 {
			continue
		}
		c.UsecPerCall = round(float64(c.Usec)/float64(c.Calls), 3)
		if ha, ok := after.hist[name]; ok && before.hist != nil {
			h, ok := diffHistogram(before.hist[name], ha)
			if !ok {
				reset = true
			}
			c.LatencyHistogram = h
		}
		s.Commands[name] = c
	}
	for name := range before.commands {
		if _, ok := after.commands[name]; !ok {
			reset = true
		}
	}
	if reset {
		s.Error = "the server's statistics were reset during the test (CONFIG RESETSTAT): commands whose counts went down are left out"
	}
	return s
}

// Merge adds o, the stats of another run of the same test (bench -l), to
// s: calls, time and buckets summed; Keys is o's (the later count).
func (s *Stats) Merge(o *Stats) {
	if o == nil {
		return
	}
	if s.Error == "" {
		s.Error = o.Error
	}
	// Available when any run was counted; Error says what was missed.
	s.Available = s.Available || o.Available
	if s.Commands == nil {
		s.Commands = map[string]Command{}
	}
	for name, oc := range o.Commands {
		c := s.Commands[name]
		c.Calls += oc.Calls
		c.Usec += oc.Usec
		if c.Calls > 0 {
			c.UsecPerCall = round(float64(c.Usec)/float64(c.Calls), 3)
		}
		switch {
		case oc.LatencyHistogram == nil:
		case c.LatencyHistogram == nil:
			h := *oc.LatencyHistogram
			h.Buckets = append([]Bucket(nil), h.Buckets...)
			c.LatencyHistogram = &h
		default:
			c.LatencyHistogram.merge(oc.LatencyHistogram)
		}
		s.Commands[name] = c
	}
	if o.Keys != nil {
		k := *o.Keys
		s.Keys = &k
	}
	if o.CPU != nil {
		if s.CPU == nil {
			s.CPU = &CPU{}
		}
		s.CPU.UserS = round(s.CPU.UserS+o.CPU.UserS, 6)
		s.CPU.SysS = round(s.CPU.SysS+o.CPU.SysS, 6)
	}
	for _, e := range o.LatencyEvents {
		if len(s.LatencyEvents) < maxEvents && !slices.Contains(s.LatencyEvents, e) {
			s.LatencyEvents = append(s.LatencyEvents, e)
		}
	}
	for addr, on := range o.Nodes {
		if s.Nodes == nil {
			s.Nodes = map[string]*Stats{}
		}
		n := s.Nodes[addr]
		if n == nil {
			n = &Stats{}
			s.Nodes[addr] = n
		}
		n.Merge(on)
	}
}

// Total is every command of s together: calls and time summed, buckets
// merged (nil when no command has a histogram).
func (s *Stats) Total() Command {
	var t Command
	if s == nil {
		return t
	}
	for _, c := range s.Commands {
		t.Calls += c.Calls
		t.Usec += c.Usec
		if c.LatencyHistogram != nil {
			if t.LatencyHistogram == nil {
				t.LatencyHistogram = &Histogram{}
			}
			t.LatencyHistogram.merge(c.LatencyHistogram)
		}
	}
	if t.Calls > 0 {
		t.UsecPerCall = round(float64(t.Usec)/float64(t.Calls), 3)
	}
	return t
}

// Sorted returns the names of s's commands, most calls first.
func (s *Stats) Sorted() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Commands))
	for n := range s.Commands {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := s.Commands[names[i]], s.Commands[names[j]]
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return names[i] < names[j]
	})
	return names
}

// unavailable is the Stats of a test the server could not be asked about.
func unavailable(format string, args ...any) *Stats {
	return &Stats{Error: fmt.Sprintf(format, args...), Commands: map[string]Command{}}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
