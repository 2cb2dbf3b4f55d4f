package resulttest

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/serverinfo"
)

// ServerSample is a server's side of a SET test, with a command name that
// needs escaping.
func ServerSample() *serverinfo.Stats {
	keys := uint64(1000)
	return &serverinfo.Stats{Available: true, Keys: &keys, Commands: map[string]serverinfo.Command{
		"set": {Calls: 10002, Usec: 12002, UsecPerCall: 1.2, LatencyHistogram: &serverinfo.Histogram{
			Calls: 10002, Buckets: []serverinfo.Bucket{{LeUsec: 1, Count: 9000}, {LeUsec: 2, Count: 950}, {LeUsec: 8, Count: 52}},
			P50: 1, P99: 2, Max: 8}},
		"info\x1b[2J": {Calls: 1, Usec: 30, UsecPerCall: 30},
	}}
}

// GetStats is a server's side that counted calls GETs, 1 µs each.
func GetStats(calls uint64) *serverinfo.Stats {
	return &serverinfo.Stats{Available: true, Commands: map[string]serverinfo.Command{"get": {Calls: calls, Usec: calls, UsecPerCall: 1}}}
}

// NodeHist records n response times from base µs up, one µs apart.
func NodeHist(n int, baseUs int64) *hdrhistogram.Histogram {
	h := histo.New()
	for i := range int64(n) {
		_ = h.RecordValue((baseUs + i) * 1000)
	}
	return h
}
