package main

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/looptap"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/internal/wiretruth"
	"github.com/pacer-load/pacer/report"
)

// TestPubsubAgreesWithTheWire: against redis-server, one publisher at
// 10k messages/s to one channel with 10 subscribers for 10 s; every one
// of the 1,000,000 deliveries, dated on the wire (internal/wiretruth),
// against pacer's own.
//
// The wire dates a segment where the receive path hands it to the taps,
// about 3 µs after the socket's own stamp (internal/looptap's test), so
// pacer reads a little earlier at p50. And a reader the machine
// descheduled finds the segments that came meanwhile merged by the
// kernel (tcp_try_coalesce), which keeps the last one's stamp: the
// earlier deliveries are dated late, about 1% of them on a shared 2-core
// machine, which moves pacer's p99 5–25% above the wire's. The issue's
// acceptance (p50 within 15 µs, p99 within 2%) holds where nothing
// preempts pacer: bench/wire measures it with pacer at real-time
// priority, which would starve the rest of .ci/run here. This test holds
// pacer to what it can only get wrong one way: never earlier than the
// wire beyond the tap's few µs, and not far later, while pacer trusts its
// own run. On a machine so busy that pacer's verdict says its generator
// was behind (a CI run beside other suites: the wire's own p50 2.2 ms,
// pacer's 0.46 ms later), the coalescing reaches the median too; pacer
// said it, and what is left to hold it to is the one-way bound.
func TestPubsubAgreesWithTheWire(t *testing.T) {
	testrun.SkipShort(t, "publishes 100,000 messages to 10 subscribers of a redis-server")
	testrun.SkipRace(t, "compares latencies to the microsecond")
	rs := redistest.Start(t)
	w, err := wiretruth.Start(rs.Port)
	if errors.Is(err, looptap.ErrUnsupported) {
		t.Skipf("%v (.ci/run runs as root)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pubsub.json")
	code, stdout, stderr := pacer(t, "pubsub", "-p", rs.PortString(), "--rate", "10k", "--duration", "10s", "--subscribers", "10", "-q", "--json", out)
	h, st := w.Stop()
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	tt := resultDocument(t, out).Tests[0]
	if m := tt.Messages; m.Delivered != 1000000 || m.Lost != 0 {
		t.Fatalf("delivered %d, lost %d", m.Delivered, m.Lost)
	}
	if st.Gaps != 0 || st.Dropped != 0 || h.TotalCount() != 1000000 {
		t.Fatalf("the tap dated %d deliveries (stats %+v): it cannot referee", h.TotalCount(), st)
	}
	p50, p99 := histo.Millis(h.ValueAtQuantile(50)), histo.Millis(h.ValueAtQuantile(99))
	d50, rel99 := (tt.ResponseMs.P50-p50)*1000, 100*(tt.ResponseMs.P99-p99)/p99
	t.Logf("delivery p50 pacer %.3f ms, wire %.3f ms (%+.1f µs); p99 pacer %.3f ms, wire %.3f ms (%+.1f µs, %+.2f%%); p99.9 pacer %.3f ms, wire %.3f ms; %d segments; verdict %s",
		tt.ResponseMs.P50, p50, d50, tt.ResponseMs.P99, p99, (tt.ResponseMs.P99-p99)*1000, rel99, tt.ResponseMs.P999,
		histo.Millis(h.ValueAtQuantile(99.9)), st.Segments, tt.Verdict)
	if d50 < -15 || rel99 < -2 {
		t.Errorf("pacer's deliveries against the wire's: p50 %+.1f µs, p99 %+.2f%%; pacer cannot date a delivery before it arrived: want the p50 at most 15 µs and the p99 at most 2%% earlier than the wire's", d50, rel99)
	}
	if tt.Verdict == report.VerdictGeneratorBehind {
		t.Logf("pacer's verdict says its generator was behind: its late side is not held to the quiet machine's bounds")
		return
	}
	if d50 > 50 || rel99 > 50 {
		t.Errorf("pacer's deliveries against the wire's: p50 %+.1f µs, p99 %+.2f%% on a run pacer trusts (verdict %s); want the p50 at most 50 µs and the p99 at most 50%% later", d50, rel99, tt.Verdict)
	}
}
