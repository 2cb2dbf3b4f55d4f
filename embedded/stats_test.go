package embedded

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

func TestUsecBucket(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want int
	}{
		{0, 0},          // nothing: the first bucket, ≤ 1 µs
		{1000, 0},       // exactly 1 µs
		{1001, 1},       // just above: ≤ 2 µs
		{2000, 1},       // exactly 2 µs
		{3000, 2},       // ≤ 4 µs
		{1 << 20, 11},   // 1048.6 µs: ≤ 2048 µs
		{1 << 62, 30},   // beyond the range: the last bucket
		{-5, 0},         // a clock that went back counts as nothing
		{200_000, 8},    // 200 µs: ≤ 256 µs
		{256_000, 8},    // exactly 256 µs
		{256_001, 9},    // just above
		{999_999, 10},   // 1000 µs: ≤ 1024 µs
		{2_000_000, 11}, // 2 ms: ≤ 2048 µs
	} {
		if got := usecBucket(tc.ns); got != tc.want {
			t.Errorf("usecBucket(%d) = %d, want %d", tc.ns, got, tc.want)
		}
	}
}

var cmdstatLine = regexp.MustCompile(`cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=(\d+\.\d\d),rejected_calls=0,failed_calls=0\r\n`)

// TestCommandstatsAndLatencyHistogram: INFO commandstats reports calls and
// time per command as Redis does (INFO not counting itself), and LATENCY
// HISTOGRAM the cumulative counts of power-of-two buckets.
func TestCommandstatsAndLatencyHistogram(t *testing.T) {
	s := dial(t, start(t, Faults{}))
	for range 3 {
		s.do("SET", "k", "v")
	}
	s.do("GET", "k")
	info := s.do("INFO", "commandstats")
	if strings.Contains(info, "# Server") || strings.Contains(info, "# Keyspace") || !strings.Contains(info, "# Commandstats\r\n") {
		t.Fatalf("INFO commandstats holds other sections or lacks its own:\n%s", info)
	}
	calls := map[string]int{}
	for _, m := range cmdstatLine.FindAllStringSubmatch(info, -1) {
		calls[m[1]], _ = strconv.Atoi(m[2])
	}
	if calls["set"] != 3 || calls["get"] != 1 || calls["info"] != 0 {
		t.Fatalf("calls %v from\n%s", calls, info)
	}
	if again := s.do("INFO", "commandstats"); !strings.Contains(again, "cmdstat_info:calls=1,") {
		t.Fatalf("the first INFO is not counted by the second:\n%s", again)
	}
	// One SET: a 1 µs bucket or a little above on a slow machine; the
	// counts are cumulative and end at the calls.
	got := s.do("LATENCY", "HISTOGRAM", "set")
	m := regexp.MustCompile(`^\*2\r\n\$3\r\nset\r\n\*4\r\n\$5\r\ncalls\r\n:3\r\n\$14\r\nhistogram_usec\r\n\*(\d+)\r\n((?::\d+\r\n)+)$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("LATENCY HISTOGRAM set = %q", got)
	}
	ints := regexp.MustCompile(`:(\d+)`).FindAllStringSubmatch(m[2], -1)
	if n, _ := strconv.Atoi(m[1]); n != len(ints) || n%2 != 0 {
		t.Fatalf("LATENCY HISTOGRAM set: %d elements announced, %d sent", n, len(ints))
	}
	last := ints[len(ints)-1][1]
	if last != "3" {
		t.Fatalf("LATENCY HISTOGRAM set ends at %s calls, want 3: %q", last, got)
	}
	if all := s.do("LATENCY", "HISTOGRAM"); !strings.Contains(all, "$3\r\nget\r\n") || !strings.Contains(all, "$4\r\ninfo\r\n") {
		t.Fatalf("LATENCY HISTOGRAM without names lacks a called command: %q", all)
	}
	if got := s.do("LATENCY", "DOCTOR"); !strings.HasPrefix(got, "-ERR unknown subcommand 'DOCTOR'") {
		t.Fatalf("LATENCY DOCTOR = %q", got)
	}
	if got := s.do("CONFIG", "GET", "io-threads"); got != "*2\r\n$10\r\nio-threads\r\n$1\r\n1\r\n" {
		t.Fatalf("CONFIG GET io-threads = %q", got)
	}
	s.do("CONFIG", "RESETSTAT")
	if got := s.do("INFO", "commandstats"); strings.Contains(got, "cmdstat_set") {
		t.Fatalf("CONFIG RESETSTAT kept the counts:\n%s", got)
	}
}

// TestDelayCountsAsServerTime: a --delay is the server's time for the
// command, in usec and in the histogram's bucket.
func TestDelayCountsAsServerTime(t *testing.T) {
	s := dial(t, start(t, Faults{Delay: Delay{Kind: DelayFixed, A: 3 * time.Millisecond}}))
	s.do("SET", "k", "v")
	s.do("SET", "k", "v")
	info := s.do("INFO", "commandstats")
	m := regexp.MustCompile(`cmdstat_set:calls=2,usec=(\d+),`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no SET line in\n%s", info)
	}
	if usec, _ := strconv.Atoi(m[1]); usec < 6000 {
		t.Fatalf("two SETs delayed 3 ms each took %d µs on the server", usec)
	}
	// 3 ms and a little: the 4096 µs bucket holds both.
	if got := s.do("LATENCY", "HISTOGRAM", "SET"); !strings.HasSuffix(got, "*2\r\n:4096\r\n:2\r\n") {
		t.Fatalf("LATENCY HISTOGRAM SET = %q, want both calls at ≤ 4096 µs", got)
	}
}

// TestInfoSections: INFO names sections as Redis does; none, all,
// everything or default give every section.
func TestInfoSections(t *testing.T) {
	s := dial(t, start(t, Faults{}))
	s.do("SET", "k", "v")
	if got := s.do("INFO", "server"); !strings.Contains(got, "redis_version:") || strings.Contains(got, "# Keyspace") {
		t.Fatalf("INFO server:\n%s", got)
	}
	if got := s.do("INFO", "keyspace"); !strings.Contains(got, "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n") || strings.Contains(got, "# Server") {
		t.Fatalf("INFO keyspace:\n%s", got)
	}
	for _, args := range [][]string{{"INFO"}, {"INFO", "all"}, {"INFO", "everything"}, {"info", "DEFAULT"}} {
		got := s.do(args...)
		if !testrun.Contains(t, got, "# Server", "# Memory", "# Stats", "# Commandstats", "# Keyspace") {
			t.Fatalf("INFO %v", args[1:])
		}
	}
}
