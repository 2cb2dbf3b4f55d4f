package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/serverinfo"
)

// TestTextWithServerGolden pins the server's table, the time split and the
// network line under a test.
func TestTextWithServerGolden(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	r.BytesSent, r.BytesReceived = 413_500_000, 500_000
	r.Window = time.Second
	var b bytes.Buffer
	if err := text.Text(&b, withServer(report.AsTest(t, r, nil), resulttest.ServerSample()), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	resulttest.Golden(t, "text_server.golden", b.Bytes())
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
	if err := text.Text(&plain, report.AsTest(t, resulttest.Sample(), nil), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := text.Text(&with, withServer(report.AsTest(t, resulttest.Sample(), nil), nil), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if plain.String() != with.String() || strings.Contains(plain.String(), "network") || strings.Contains(plain.String(), "server side") {
		t.Fatalf("Text changed:\n%s", plain.String())
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
		if got := text.ServerLine(tc.id); got != tc.want {
			t.Errorf("ServerLine = %q\nwant          %q", got, tc.want)
		}
	}
}

// withServer gives t the server's side of the test.
func withServer(t *report.Test, s *serverinfo.Stats) *report.Test {
	t.Server = s
	return t
}
