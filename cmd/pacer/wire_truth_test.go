package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/looptap"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/messages"
)

// wire dates pacer's deliveries independently of pacer: a tap on the
// loopback interface (package looptap) sees the segments the server sends
// to every subscriber, and each delivery found in a connection's stream
// is dated by the kernel's timestamp of the segment that carried its last
// byte, from the intended instant in its payload.
type wire struct {
	tap   *looptap.Tap
	mu    sync.Mutex
	flows map[uint16][]byte
	h     *hdrhistogram.Histogram
}

func tapDeliveries(t *testing.T, port int) *wire {
	t.Helper()
	w := &wire{flows: map[uint16][]byte{}, h: histo.New()}
	tap, err := looptap.Start(looptap.Config{ServerPort: uint16(port), Now: clock.Now, OnSegment: w.segment})
	if errors.Is(err, looptap.ErrUnsupported) {
		t.Skipf("%v (.ci/run runs as root)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.tap = tap
	return w
}

// segment adds a segment to its connection's stream and dates the
// deliveries it completes. Bytes that cannot begin a delivery (replies,
// the publisher's integers) are dropped up to the next array.
func (w *wire) segment(s looptap.Segment) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := append(w.flows[s.Port], s.Payload...)
	for len(b) > 0 {
		if b[0] != '*' {
			i := bytes.IndexByte(b, '*')
			if i < 0 {
				b = b[:0]
				break
			}
			b = b[i:]
		}
		msg, rest, ok := nextMessage(b)
		if !ok {
			if len(b) > 1<<20 { // not a delivery after all
				b = b[1:]
				continue
			}
			break
		}
		if h, ok := messages.ParseHeader(msg); ok {
			_ = w.h.RecordValue(max(s.At-h.Intended, 0))
		}
		b = rest
	}
	w.flows[s.Port] = append(w.flows[s.Port][:0], b...)
}

func (w *wire) stop(t *testing.T) (*hdrhistogram.Histogram, looptap.Stats) {
	t.Helper()
	st := w.tap.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.h, st
}

// TestPubsubAgreesWithTheWire: against redis-server, one publisher at
// 10k messages/s to one channel with 10 subscribers for 10 s; every
// delivery, dated on the wire by the tap, against pacer's own: p50 within
// 15 µs and p99 within 2% (the acceptance).
//
// The tap dates a segment where the receive path hands it to the taps,
// about 3 µs after the socket's own stamp (internal/looptap's test), so
// pacer reads earlier by that much. And a reader the machine descheduled
// finds the segments that came meanwhile merged into one by the kernel
// (tcp_try_coalesce), which keeps the last one's stamp: the deliveries of
// the earlier ones are dated late. On a shared 2-core machine with the
// server beside it that is about 1% of them, which moves pacer's p99 5–25%
// above the wire's. So the acceptance is judged on the pacer binary run
// with real-time priority (chrt -f), which no other process preempts; the
// same run at normal priority, in this process, is logged beside it.
func TestPubsubAgreesWithTheWire(t *testing.T) {
	testrun.SkipShort(t, "publishes 100,000 messages to 10 subscribers of a redis-server, twice")
	testrun.SkipRace(t, "compares latencies to the microsecond")
	chrt, err := exec.LookPath("chrt")
	if err != nil {
		t.Fatalf("chrt (util-linux) is needed to run pacer with real-time priority: %v", err)
	}
	rs := redistest.Start(t)
	args := []string{"pubsub", "-p", rs.PortString(), "--rate", "10k", "--duration", "10s", "--subscribers", "10"}
	check := func(name string, run func(out string) (int, string)) (d50, rel99 float64) {
		w := tapDeliveries(t, rs.Port)
		out := filepath.Join(t.TempDir(), "pubsub.json")
		code, output := run(out)
		h, st := w.stop(t)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("%s: exit %d\n%s", name, code, output)
		}
		tt := resultDocument(t, out).Tests[0]
		m := tt.Messages
		if m.Delivered != 1000000 || m.Lost != 0 {
			t.Fatalf("%s: delivered %d, lost %d", name, m.Delivered, m.Lost)
		}
		if st.Gaps != 0 || st.Dropped != 0 || h.TotalCount() != 1000000 {
			t.Fatalf("%s: the tap dated %d deliveries (stats %+v): it cannot referee", name, h.TotalCount(), st)
		}
		p50, p99 := histo.Millis(h.ValueAtQuantile(50)), histo.Millis(h.ValueAtQuantile(99))
		d50, rel99 = (tt.ResponseMs.P50-p50)*1000, 100*(tt.ResponseMs.P99-p99)/p99
		t.Logf("%s: delivery p50 pacer %.3f ms, wire %.3f ms (%+.1f µs); p99 pacer %.3f ms, wire %.3f ms (%+.1f µs, %+.2f%%); p99.9 pacer %.3f ms, wire %.3f ms; %d segments; verdict %s",
			name, tt.ResponseMs.P50, p50, d50, tt.ResponseMs.P99, p99, (tt.ResponseMs.P99-p99)*1000, rel99, tt.ResponseMs.P999,
			histo.Millis(h.ValueAtQuantile(99.9)), st.Segments, tt.Verdict)
		return d50, rel99
	}
	d50, rel99 := check("real-time priority", func(out string) (int, string) {
		cmd := exec.Command(chrt, append([]string{"-f", "10", pacerBinary(t)}, append(args, "-q", "--json", out)...)...)
		output, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("chrt -f 10 pacer: %v\n%s", err, output)
		}
		return cmd.ProcessState.ExitCode(), string(output)
	})
	if abs(d50) > 15 || abs(rel99) > 2 {
		t.Errorf("pacer's deliveries and the wire's disagree: p50 %+.1f µs (want within 15), p99 %+.2f%% (want within 2%%)", d50, rel99)
	}
	d50, rel99 = check("normal priority", func(out string) (int, string) {
		code, stdout, stderr := pacer(t, append(args, "-q", "--json", out)...)
		return code, stdout + stderr
	})
	// Preempted, pacer can only date late, and only the few merged ones.
	if abs(d50) > 15 || rel99 < -2 || rel99 > 50 {
		t.Errorf("at normal priority: p50 %+.1f µs, p99 %+.2f%%: want the p50 within 15 µs and the p99 0–50%% above the wire's", d50, rel99)
	}
}
