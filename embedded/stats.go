package embedded

import (
	"bytes"
	"math/bits"
	"sort"
	"strconv"
)

// cmdStats is one command's statistics, as INFO commandstats and LATENCY
// HISTOGRAM report them. A command's time is its execution (real time
// under the server lock) plus the --delay drawn for it: what Redis would
// count as the command's usec. Stalls and the wait behind other commands
// are not in it, as in Redis.
type cmdStats struct {
	calls uint64
	ns    int64
	// hist counts calls by power-of-two microseconds: hist[k] holds those
	// that took at most 2^k µs (and more than 2^(k-1) µs).
	hist [histBuckets]uint64
}

// histBuckets covers 1 µs to 2^30 µs (about 18 minutes); longer calls
// count in the last bucket.
const histBuckets = 31

// usecBucket is the bucket of a call that took ns nanoseconds.
func usecBucket(ns int64) int {
	us := (max(ns, 0) + 999) / 1000
	if us <= 1 {
		return 0
	}
	return min(bits.Len64(uint64(us-1)), histBuckets-1)
}

// record counts one call of command i that took ns. Call with s.mu held.
func (s *Server) record(i int, ns int64) {
	st := &s.stats[i]
	st.calls++
	st.ns += ns
	st.hist[usecBucket(ns)]++
}

// addDelay adds the delay d drawn for a call of command i that took ns
// to execute (already recorded). Call with s.mu held.
func (s *Server) addDelay(i int, ns, d int64) {
	st := &s.stats[i]
	st.ns += d
	st.hist[usecBucket(ns)]--
	st.hist[usecBucket(ns+d)]++
}

// writeCommandstats appends INFO's Commandstats section, in Redis's words:
// cmdstat_get:calls=2,usec=5,usec_per_call=2.50,rejected_calls=0,failed_calls=0
func (s *Server) writeCommandstats(b *bytes.Buffer) {
	b.WriteString("# Commandstats\r\n")
	for _, i := range s.called() {
		st := &s.stats[i]
		usec := st.ns / 1000
		b.WriteString("cmdstat_" + commandTable[i].name + ":calls=" + strconv.FormatUint(st.calls, 10) +
			",usec=" + strconv.FormatInt(usec, 10) +
			",usec_per_call=" + strconv.FormatFloat(float64(usec)/float64(st.calls), 'f', 2, 64) +
			",rejected_calls=0,failed_calls=0\r\n")
	}
}

// called lists the commands called at least once, by name.
func (s *Server) called() []int {
	order := make([]int, 0, len(commandTable))
	for i := range s.stats {
		if s.stats[i].calls > 0 {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(x, y int) bool { return commandTable[order[x]].name < commandTable[order[y]].name })
	return order
}

// cmdLatency answers LATENCY HISTOGRAM [command ...] as Redis 7 does: per
// command called so far (of those named, if any), its calls and the
// cumulative count of calls at or below each non-empty power-of-two bucket
// bound in microseconds. Other LATENCY subcommands are unknown.
func cmdLatency(c *client, a [][]byte) {
	if !is(a[1], "HISTOGRAM") {
		c.unknownSubcommand(a[1], "LATENCY")
		return
	}
	s := c.srv
	var pick []int
	for _, i := range s.called() {
		if len(a) == 2 {
			pick = append(pick, i)
			continue
		}
		for _, name := range a[2:] {
			if is(name, commandUpper[i]) {
				pick = append(pick, i)
				break
			}
		}
	}
	c.mapHeader(len(pick))
	for _, i := range pick {
		st := &s.stats[i]
		c.bulkString(commandTable[i].name)
		c.mapHeader(2)
		c.bulkString("calls")
		c.integer(int64(st.calls))
		c.bulkString("histogram_usec")
		n := 0
		for _, k := range st.hist {
			if k > 0 {
				n++
			}
		}
		c.mapHeader(n)
		var cum uint64
		for k, v := range st.hist {
			if v == 0 {
				continue
			}
			cum += v
			c.integer(1 << k)
			c.integer(int64(cum))
		}
	}
}
