package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

func serverSample() *serverinfo.Stats {
	keys := uint64(1000)
	return &serverinfo.Stats{Available: true, Keys: &keys, Commands: map[string]serverinfo.Command{
		"set": {Calls: 10002, Usec: 12002, UsecPerCall: 1.2, LatencyHistogram: &serverinfo.Histogram{
			Calls: 10002, Buckets: []serverinfo.Bucket{{LeUsec: 1, Count: 9000}, {LeUsec: 2, Count: 950}, {LeUsec: 8, Count: 52}},
			P50: 1, P99: 2, Max: 8}},
		"info\x1b[2J": {Calls: 1, Usec: 30, UsecPerCall: 30},
	}}
}

// getStats is a server's side that counted calls GETs, 1 µs each.
func getStats(calls uint64) *serverinfo.Stats {
	return &serverinfo.Stats{Available: true, Commands: map[string]serverinfo.Command{"get": {Calls: calls, Usec: calls, UsecPerCall: 1}}}
}

// TestTextWithServerGolden pins the server's table, the time split and the
// network line under a test.
func TestTextWithServerGolden(t *testing.T) {
	t.Parallel()
	r := sample()
	r.BytesSent, r.BytesReceived = 413_500_000, 500_000
	r.Window = time.Second
	var b bytes.Buffer
	if err := Text(&b, withServer(asTest(t, r, nil), serverSample()), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_server.golden", b.Bytes())
	out := b.String()
	testrun.Contains(t, out,
		"network        out 413.50 MB/s (3.31 Gbit/s), in 500.00 kB/s (4.00 Mbit/s); per request 41.34 kB out, 50 B in — more than a 1 Gbit/s link carries",
		"set                 10002    1.20 µs       1 µs       2 µs",
		"info\\x1b[2J",
		"service = server 1.20 µs + network, client and server queue",
	)
	if strings.Contains(out, "\x1b") {
		t.Error("server text reached the terminal unescaped")
	}
	// Without server stats and bytes, Text is what it was.
	var plain, with bytes.Buffer
	if err := Text(&plain, asTest(t, sample(), nil), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Text(&with, withServer(asTest(t, sample(), nil), nil), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if plain.String() != with.String() || strings.Contains(plain.String(), "network") || strings.Contains(plain.String(), "server side") {
		t.Fatalf("Text changed:\n%s", plain.String())
	}
}

func TestServerUnavailableAndOtherClients(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeServer(&b, asTest(t, sample(), nil), &serverinfo.Stats{Error: "INFO refused: ERR unknown command 'INFO'"})
	if got := b.String(); got != "  server side    not available: INFO refused: ERR unknown command 'INFO'\n" {
		t.Fatalf("unavailable: %q", got)
	}
	b.Reset()
	writeServer(&b, asTest(t, sample(), nil), getStats(50000))
	if !strings.Contains(b.String(), "the server counted 50000 calls, pacer sent 10002: other clients were busy too") {
		t.Fatalf("other clients not noted:\n%s", b.String())
	}
	if got := ServerBrief(&serverinfo.Stats{Error: "could not ask the server: no reply within 1.5s"}); got != "server side: not available (could not ask the server: no reply within 1.5s)" {
		t.Fatalf("brief %q", got)
	}
	if got := ServerBrief(serverSample()); got != "server side: set 10002 calls, 1.20 µs/call, p50 ≤ 1 µs, p99 ≤ 2 µs; info\\x1b[2J 1 calls, 30.0 µs/call; 1000 keys after" {
		t.Fatalf("brief %q", got)
	}
}

func TestServerLine(t *testing.T) {
	t.Parallel()
	keys := uint64(1234)
	for _, tc := range []struct {
		id   *serverinfo.Identity
		want string
	}{
		{&serverinfo.Identity{Available: true, Name: "redis", Version: "7.0.15", RedisVersion: "7.0.15", Mode: "standalone", Keys: &keys,
			Config: map[string]string{"save": "3600 1 300 100", "appendonly": "no", "io-threads": "4", "maxmemory-policy": "allkeys-lru"}},
			`server: redis 7.0.15 (standalone); save "3600 1 300 100", appendonly no, io-threads 4, maxmemory-policy allkeys-lru; 1234 keys`},
		{&serverinfo.Identity{Available: true, Name: "valkey", Version: "8.0.2", RedisVersion: "7.2.4", Config: map[string]string{"save": ""}},
			`server: valkey 8.0.2 (redis_version 7.2.4); save ""`},
		{&serverinfo.Identity{Available: true, Name: "dragonfly", Version: "df-v1.40.1", RedisVersion: "7.4.0", ThreadCount: "7", Config: map[string]string{}},
			`server: dragonfly df-v1.40.1 (redis_version 7.4.0), 7 threads`},
		{&serverinfo.Identity{Error: "INFO refused: ERR unknown command 'INFO'\x1b]0;x\x07", Config: map[string]string{}},
			`server: unknown (INFO refused: ERR unknown command 'INFO'\x1b]0;x\x07)`},
	} {
		if got := ServerLine(tc.id); got != tc.want {
			t.Errorf("ServerLine = %q\nwant          %q", got, tc.want)
		}
	}
}

// TestFourKilobytesAtAHundredThousand: the arithmetic of the issue, 4 KB
// values at 100k req/s, reads as about 3.3 Gbit/s.
func TestFourKilobytesAtAHundredThousand(t *testing.T) {
	t.Parallel()
	// A SET of a 4096-byte value with a 16-byte key is about 4135 bytes.
	r := &scheduler.Result{Window: 10 * time.Second, BytesSent: 4135 * 1_000_000, BytesReceived: 5 * 1_000_000,
		Counts: scheduler.Counts{Sent: 1_000_000, Completed: 1_000_000}}
	got := networkLine(asTest(t, r, nil))
	want := "out 413.50 MB/s (3.31 Gbit/s), in 500.00 kB/s (4.00 Mbit/s); per request 4.13 kB out, 5 B in — more than a 1 Gbit/s link carries"
	if got != want {
		t.Fatalf("networkLine = %q\nwant            %q", got, want)
	}
	if got := networkLine(asTest(t, &scheduler.Result{Window: time.Second}, nil)); got != "" {
		t.Fatalf("nothing counted: %q", got)
	}
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0 bit/s"}, {99.6, "797 bit/s"}, {125, "1.00 kbit/s"}, {1.25e8, "1.00 Gbit/s"}, {1.25e14, "1000.00 Tbit/s"}} {
		if got := BitRate(tc.v); got != tc.want {
			t.Errorf("BitRate(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestJSONServerFields: the names README documents.
func TestJSONServerFields(t *testing.T) {
	t.Parallel()
	keys := uint64(3)
	doc := &Document{Schema: Schema, Tests: []Test{{Name: "SET", Server: serverSample()}},
		Server: &serverinfo.Identity{Available: true, Name: "redis", Version: "7.0.15", RedisVersion: "7.0.15", Keys: &keys,
			Config: map[string]string{"save": ""}, ConfigRefused: "not in JSON"}}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Server map[string]any `json:"server"`
		Tests  []struct {
			Server struct {
				Available bool
				Keys      uint64
				Commands  map[string]map[string]any
			} `json:"server"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"available", "name", "version", "redis_version", "config", "keys"} {
		if _, ok := m.Server[k]; !ok {
			t.Errorf("server lacks %q: %v", k, m.Server)
		}
	}
	if _, ok := m.Server["ConfigRefused"]; ok || strings.Contains(string(b), "not in JSON") {
		t.Error("ConfigRefused leaked into the JSON")
	}
	set := m.Tests[0].Server.Commands["set"]
	for _, k := range []string{"calls", "usec", "usec_per_call", "latency_histogram"} {
		if _, ok := set[k]; !ok {
			t.Errorf("tests[0].server.commands.set lacks %q: %v", k, set)
		}
	}
	h := set["latency_histogram"].(map[string]any)
	for _, k := range []string{"calls", "buckets", "p50_le_usec", "p99_le_usec", "max_le_usec"} {
		if _, ok := h[k]; !ok {
			t.Errorf("latency_histogram lacks %q: %v", k, h)
		}
	}
	if !m.Tests[0].Server.Available || m.Tests[0].Server.Keys != 1000 {
		t.Errorf("tests[0].server %+v", m.Tests[0].Server)
	}
	if m.Tests[0].Server.Commands["info\x1b[2J"]["latency_histogram"] != nil {
		t.Error("a command without a histogram has one")
	}
}
