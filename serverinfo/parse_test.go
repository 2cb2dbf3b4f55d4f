package serverinfo

import (
	"reflect"
	"testing"

	"github.com/pacer-load/pacer/conn"
)

func TestParseCommandstats(t *testing.T) {
	text := "# Commandstats\r\n" +
		"cmdstat_get:calls=20001,usec=1610,usec_per_call=0.08,rejected_calls=0,failed_calls=0\r\n" + // Redis 7
		"cmdstat_config|get:calls=3,usec=10,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\n" + // a subcommand
		"cmdstat_set:calls=7,usec=21,usec_per_call=3.00\r\n" + // Redis 6.0
		"cmdstat_HSET:calls=2,usec=4,usec_per_call=2\r\n" + // upper case
		"cmdstat_broken:usec=4\r\n" + // no calls: not a line we understand
		"cmdstat_neg:calls=-1,usec=4\r\n" +
		"unknown_foo:3\r\n" // Dragonfly's unknown commands: not commands
	got := parseCommandstats(text)
	want := map[string]counter{
		"get":        {20001, 1610},
		"config|get": {3, 10},
		"set":        {7, 21},
		"hset":       {2, 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseCommandstats = %v, want %v", got, want)
	}
}

func TestParseKeyspace(t *testing.T) {
	for _, tc := range []struct {
		text string
		keys uint64
		ok   bool
	}{
		{"# Keyspace\r\ndb0:keys=10,expires=0,avg_ttl=0\r\ndb3:keys=5,expires=1,avg_ttl=9\r\n", 15, true},
		{"# Keyspace\r\n", 0, true}, // an empty server says so with an empty section
		{"", 0, false},              // nothing said
		{"# Keyspace\r\ndbx:keys=10\r\ndb1:keys=x\r\n", 0, true},
	} {
		k, ok := parseKeyspace(tc.text)
		if k != tc.keys || ok != tc.ok {
			t.Errorf("parseKeyspace(%q) = %d, %v; want %d, %v", tc.text, k, ok, tc.keys, tc.ok)
		}
	}
}

// ints builds a RESP array of integers.
func ints(kind byte, v ...int64) conn.Value {
	out := conn.Value{Kind: kind}
	for _, n := range v {
		out.Elems = append(out.Elems, conn.Value{Kind: ':', Int: n})
	}
	return out
}

func bulk(s string) conn.Value { return conn.Value{Kind: '$', Str: s} }

// histReply is LATENCY HISTOGRAM's reply for one command, in RESP2
// (kind '*') or RESP3 (kind '%', Elems flattened as the reader keeps maps).
func histReply(kind byte, name string, calls int64, pairs ...int64) conn.Value {
	return conn.Value{Kind: kind, Elems: []conn.Value{
		bulk(name),
		{Kind: kind, Elems: []conn.Value{bulk("calls"), {Kind: ':', Int: calls}, bulk("histogram_usec"), ints(kind, pairs...)}},
	}}
}

func TestParseLatencyHistogram(t *testing.T) {
	for _, kind := range []byte{'*', '%'} {
		got := parseLatencyHistogram(histReply(kind, "GET", 20001, 1, 19993, 2, 19996, 4, 20000, 66, 20001))
		want := map[string]cumulative{"get": {calls: 20001, bounds: []uint64{1, 2, 4, 66}, cum: []uint64{19993, 19996, 20000, 20001}}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%c: parseLatencyHistogram = %+v, want %+v", kind, got, want)
		}
	}
	// Not ascending or not cumulative: left out rather than misread.
	for _, pairs := range [][]int64{{4, 1, 2, 2}, {1, 5, 2, 3}, {-1, 3}} {
		if got := parseLatencyHistogram(histReply('*', "get", 5, pairs...)); len(got) != 0 {
			t.Errorf("histogram %v read as %+v", pairs, got)
		}
	}
	// An empty reply (latency-tracking off, nothing called) and garbage.
	if got := parseLatencyHistogram(conn.Value{Kind: '*'}); len(got) != 0 {
		t.Errorf("empty reply read as %+v", got)
	}
	if got := parseLatencyHistogram(bulk("nonsense")); len(got) != 0 {
		t.Errorf("a bulk read as %+v", got)
	}
}

func TestDiffHistogram(t *testing.T) {
	before := cumulative{calls: 100, bounds: []uint64{1, 2, 8}, cum: []uint64{90, 95, 100}}
	after := cumulative{calls: 1100, bounds: []uint64{1, 2, 4, 8, 16}, cum: []uint64{890, 1080, 1090, 1095, 1100}}
	h, ok := diffHistogram(before, after)
	if !ok {
		t.Fatal("a growing histogram read as reset")
	}
	// ≤1: 890-90 = 800; ≤2: (1080-95) - 800 = 185; ≤4: (1090-95) - 985 = 10;
	// ≤8: (1095-100) - 995 = 0 (left out); ≤16: (1100-100) - 995 = 5.
	want := &Histogram{Calls: 1000, Buckets: []Bucket{{1, 800}, {2, 185}, {4, 10}, {16, 5}}, P50: 1, P99: 4, Max: 16}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("diffHistogram = %+v, want %+v", h, want)
	}
	if h, ok := diffHistogram(before, before); !ok || h != nil {
		t.Fatalf("no calls in between: %+v, %v; want nil, true", h, ok)
	}
	if _, ok := diffHistogram(after, before); ok {
		t.Fatal("a shrinking histogram (CONFIG RESETSTAT) not noticed")
	}
}

func TestPercentile(t *testing.T) {
	h := &Histogram{Buckets: []Bucket{{1, 98}, {2, 1}, {1024, 1}}}
	h.finish()
	for _, tc := range []struct {
		p    float64
		want uint64
	}{{50, 1}, {98, 1}, {98.5, 2}, {99, 2}, {99.9, 1024}, {100, 1024}, {0.001, 1}} {
		if got := h.Percentile(tc.p); got != tc.want {
			t.Errorf("p%v = %d, want %d", tc.p, got, tc.want)
		}
	}
	if h.Max != 1024 || h.Calls != 100 {
		t.Errorf("max %d calls %d", h.Max, h.Calls)
	}
	if (*Histogram)(nil).Percentile(50) != 0 || (&Histogram{}).Percentile(50) != 0 {
		t.Error("an empty histogram has a percentile")
	}
}

// TestDiffTakesOutOwnQueries: the commands pacer's own snapshots sent are
// not the workload's.
func TestDiffTakesOutOwnQueries(t *testing.T) {
	before := &snapshot{
		commands: map[string]counter{"get": {10, 5}, "info": {4, 100}},
		hist:     map[string]cumulative{"get": {calls: 10, bounds: []uint64{1}, cum: []uint64{10}}},
	}
	after := &snapshot{
		commands: map[string]counter{"get": {1010, 505}, "info": {5, 130}, "latency|histogram": {1, 20}, "set": {3, 9}},
		hist:     map[string]cumulative{"get": {calls: 1010, bounds: []uint64{1}, cum: []uint64{1010}}},
	}
	s := diff(before, after, own{"info": 1, "latency|histogram": 1})
	if !s.Available || s.Error != "" {
		t.Fatalf("diff: %+v", s)
	}
	get, ok := s.Commands["get"]
	if !ok || get.Calls != 1000 || get.Usec != 500 || get.UsecPerCall != 0.5 ||
		get.LatencyHistogram == nil || get.LatencyHistogram.Calls != 1000 {
		t.Fatalf("get: %+v", get)
	}
	if _, ok := s.Commands["info"]; ok {
		t.Fatalf("pacer's own INFO counted: %+v", s.Commands)
	}
	if _, ok := s.Commands["latency|histogram"]; ok {
		t.Fatalf("pacer's own LATENCY HISTOGRAM counted: %+v", s.Commands)
	}
	if set := s.Commands["set"]; set.Calls != 3 || set.LatencyHistogram != nil {
		t.Fatalf("set, new since before, without a histogram: %+v", set)
	}
	if tot := s.Total(); tot.Calls != 1003 || tot.Usec != 509 {
		t.Fatalf("total %+v", tot)
	}
	if got := s.Sorted(); !reflect.DeepEqual(got, []string{"get", "set"}) {
		t.Fatalf("sorted %v", got)
	}

	// A reset in between: said, and the commands that went down left out.
	reset := diff(after, before, nil)
	if reset.Error == "" || len(reset.Commands) != 0 {
		t.Fatalf("reset: %+v", reset)
	}
}

func TestMerge(t *testing.T) {
	k1, k2 := uint64(5), uint64(9)
	a := &Stats{Available: true, Keys: &k1, Commands: map[string]Command{
		"get": {Calls: 10, Usec: 10, UsecPerCall: 1, LatencyHistogram: &Histogram{Calls: 10, Buckets: []Bucket{{1, 10}}}},
	}}
	b := &Stats{Available: true, Keys: &k2, Commands: map[string]Command{
		"get": {Calls: 30, Usec: 90, UsecPerCall: 3, LatencyHistogram: &Histogram{Calls: 30, Buckets: []Bucket{{2, 20}, {4, 10}}}},
		"set": {Calls: 1, Usec: 2, UsecPerCall: 2},
	}}
	a.Merge(b)
	get := a.Commands["get"]
	if get.Calls != 40 || get.Usec != 100 || get.UsecPerCall != 2.5 {
		t.Fatalf("get %+v", get)
	}
	if h := get.LatencyHistogram; h.Calls != 40 || !reflect.DeepEqual(h.Buckets, []Bucket{{1, 10}, {2, 20}, {4, 10}}) || h.P50 != 2 || h.P99 != 4 {
		t.Fatalf("merged histogram %+v", h)
	}
	if a.Commands["set"].Calls != 1 || *a.Keys != 9 {
		t.Fatalf("merged %+v", a)
	}
	a.Merge(nil)
	if a.Commands["get"].Calls != 40 {
		t.Fatal("merging nothing changed the counts")
	}
}

func TestIdentify(t *testing.T) {
	for _, tc := range []struct {
		info                          map[string]string
		name, version, redis, mode, n string
	}{
		{map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone"}, "redis", "7.0.15", "7.0.15", "standalone", ""},
		{map[string]string{"redis_version": "7.2.4", "server_name": "valkey", "valkey_version": "8.0.2", "server_mode": "cluster"}, "valkey", "8.0.2", "7.2.4", "cluster", ""},
		{map[string]string{"redis_version": "7.2.4", "valkey_version": "7.2.5"}, "valkey", "7.2.5", "7.2.4", "", ""},
		{map[string]string{"redis_version": "7.4.0", "dragonfly_version": "df-v1.40.1", "redis_mode": "standalone", "thread_count": "7"}, "dragonfly", "df-v1.40.1", "7.4.0", "standalone", "7"},
		{map[string]string{"redis_version": "6.3.4", "executable": "/data/keydb-server"}, "keydb", "6.3.4", "6.3.4", "", ""},
		{map[string]string{"redis_version": "7.2.0", "pacer_embedded": "1"}, "pacer-embedded", "7.2.0", "7.2.0", "", ""},
	} {
		id := &Identity{}
		identify(id, tc.info)
		if id.Name != tc.name || id.Version != tc.version || id.RedisVersion != tc.redis || id.Mode != tc.mode || id.ThreadCount != tc.n {
			t.Errorf("%v: %+v", tc.info, id)
		}
	}
}

func TestParseInfoBoundsValues(t *testing.T) {
	long := make([]byte, maxInfoValue+1)
	for i := range long {
		long[i] = 'x'
	}
	m := parseInfo("# Server\r\nredis_version:7.0.0\r\nos:" + string(long) + "\r\nnocolon\r\n\r\n")
	if len(m) != 1 || m["redis_version"] != "7.0.0" {
		t.Fatalf("parseInfo kept %v", m)
	}
}
