package text

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

func TestServerUnavailableAndOtherClients(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeServer(&b, reporttest.AsTest(t, resulttest.Sample()), &serverinfo.Stats{Error: "INFO refused: ERR unknown command 'INFO'"})
	if got := b.String(); got != "  server side    not available: INFO refused: ERR unknown command 'INFO'\n" {
		t.Fatalf("unavailable: %q", got)
	}
	b.Reset()
	writeServer(&b, reporttest.AsTest(t, resulttest.Sample()), resulttest.GetStats(50000))
	if !strings.Contains(b.String(), "the server counted 50000 calls, pacer sent 10002: other clients were busy too") {
		t.Fatalf("other clients not noted:\n%s", b.String())
	}
	if got := ServerBrief(&serverinfo.Stats{Error: "could not ask the server: no reply within 1.5s"}); got != "server side: not available (could not ask the server: no reply within 1.5s)" {
		t.Fatalf("brief %q", got)
	}
	if got := ServerBrief(resulttest.ServerSample()); got != "server side: set 10002 calls, 1.20 µs/call, p50 ≤ 1 µs, p99 ≤ 2 µs; info\\x1b[2J 1 calls, 30.0 µs/call; 1000 keys after" {
		t.Fatalf("brief %q", got)
	}
}

// TestFourKilobytesAtAHundredThousand: the arithmetic of the issue, 4 KB
// values at 100k req/s, reads as about 3.3 Gbit/s.
func TestFourKilobytesAtAHundredThousand(t *testing.T) {
	t.Parallel()
	// A SET of a 4096-byte value with a 16-byte key is about 4135 bytes.
	r := &scheduler.Result{Window: 10 * time.Second, BytesSent: 4135 * 1_000_000, BytesReceived: 5 * 1_000_000,
		Counts: scheduler.Counts{Sent: 1_000_000, Completed: 1_000_000}}
	got := networkLine(reporttest.AsTest(t, r))
	want := "out 413.50 MB/s (3.31 Gbit/s), in 500.00 kB/s (4.00 Mbit/s); per request 4.13 kB out, 5 B in — more than a 1 Gbit/s link carries"
	if got != want {
		t.Fatalf("networkLine = %q\nwant            %q", got, want)
	}
	if got := networkLine(reporttest.AsTest(t, &scheduler.Result{Window: time.Second})); got != "" {
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
