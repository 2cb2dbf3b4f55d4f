package main

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/rxstamp"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/report"
)

func TestTrackingUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--keys 0", []string{"tracking", "--embedded", "--keys", "0"}},
		{"--readers 0", []string{"tracking", "--embedded", "--readers", "0"}},
		{"--keys 1000000 × --readers 10: at most 4194304 cached copies", []string{"tracking", "--embedded", "--keys", "1000000"}},
		{"--key-prefix must not be empty", []string{"tracking", "--embedded", "--key-prefix", ""}},
		{"-d \"8\"", []string{"tracking", "--embedded", "-d", "8"}},
		{"--slo lag: a consumer lag is a stream's", []string{"tracking", "--embedded", "--slo", "lag<=10"}},
		{"--closed throttles the closed writer to --rate", []string{"tracking", "--embedded", "--closed", "--stages", "1s:1k"}},
	} {
		wantUsageError(t, c.want, c.args...)
	}
}

// TestTrackingEmbedded: the embedded target frozen 100 ms of every 500
// ms: every write reaches every reader, or found it without a copy (a
// key is written every 10 ms, and a stall holds the refetch), none lost;
// the invalidations show the stalls from their intended writes, and the
// closed writer run next (--closed) hides them.
func TestTrackingEmbedded(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "tracking.json")
	code, stdout, stderr := pacer(t, "tracking", "--embedded", "--stall", "100ms", "--every", "500ms", "--rate", "2k", "-n", "3000",
		"--keys", "20", "--readers", "3", "--closed", "--json", out)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	d := resultDocument(t, out)
	if len(d.Tests) != 2 || d.Tests[0].Mode != "open" || d.Tests[1].Mode != "closed" || d.Mode != "tracking" {
		t.Fatalf("mode %q, %d tests", d.Mode, len(d.Tests))
	}
	if closed := d.Tests[1]; closed.ResponseMs.P90 > d.Tests[0].ResponseMs.P99/3 || closed.Messages.Lost != 0 {
		t.Errorf("closed writer: p90 %.3f ms against the open p99 %.3f ms, lost %d", closed.ResponseMs.P90, d.Tests[0].ResponseMs.P99, closed.Messages.Lost)
	}
	testrun.Contains(t, stdout, "open against closed writer", "open: from the intended write", "closed: from the actual send")
	tt := d.Tests[0]
	m := tt.Messages
	if m.Delivered+m.Tracking.Uncached != 9000 || m.Expected != m.Delivered || m.Lost != 0 || m.Tracking.Refetches != m.Delivered || m.Delivered < 1000 {
		t.Fatalf("messages %+v, tracking %+v", m, m.Tracking)
	}
	if tt.ResponseMs.P99 < 60 {
		t.Errorf("invalidation p99 %.3f ms: want the 100 ms stalls in it", tt.ResponseMs.P99)
	}
	testrun.Contains(t, stdout, "CLIENT TRACKING: SET 64 B to 20 keys, 3 readers", "invalidations  expected ")
}

// TestTrackingAgainstRedis: against redis-server, every write of a cached
// key reaches every reader as one invalidation (default mode: each
// reader refetches the key and is tracked again; BCAST: every write of
// the prefix), none lost; the JSON says so in tracking's terms, and pacer
// report reads it back.
func TestTrackingAgainstRedis(t *testing.T) {
	testrun.SkipShort(t, "writes cached keys of a redis-server for 2 s, twice")
	t.Parallel()
	rs := redistest.Start(t)
	for _, bcast := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "tracking.json")
		args := []string{"tracking", "-p", rs.PortString(), "--rate", "2k", "-n", "4000", "--keys", "50", "--readers", "4",
			"--slo", "loss<=0,p99<=1s", "--json", out}
		if bcast {
			args = append(args, "--bcast")
		}
		code, stdout, stderr := pacer(t, args...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("bcast %v: exit %d\n%s\n%s", bcast, code, stdout, stderr)
		}
		d := resultDocument(t, out)
		if d.Mode != "tracking" || len(d.Tests) != 1 {
			t.Fatalf("mode %q, %d tests", d.Mode, len(d.Tests))
		}
		tt := d.Tests[0]
		m, v := tt.Messages, tt.Messages.Tracking
		// Every write reaches every reader; in default mode one that came
		// before the reader's refetch found no copy (uncached), which a
		// slow machine (the race detector) makes more common.
		if m.Kind != "tracking" || m.Published != 4000 || m.Delivered+v.Uncached != 16000 || m.Expected != m.Delivered || m.Lost != 0 ||
			len(m.Receivers) != 4 || v == nil || v.BCAST != bcast || v.StaleAtEnd != 0 || v.Spurious != 0 {
			t.Fatalf("bcast %v: messages %+v, tracking %+v", bcast, m, v)
		}
		if !bcast && (v.Pushes != m.Delivered || v.Refetches != m.Delivered) {
			t.Errorf("default mode: %+v; want a push and a refetch per invalidation", v)
		}
		if bcast && v.Uncached != 0 {
			t.Errorf("BCAST: %d uncached", v.Uncached)
		}
		if tt.SLO == nil || !tt.SLO.Pass || tt.ResponseMs == nil || tt.ResponseMs.P50 <= 0 {
			t.Errorf("bcast %v: slo %+v", bcast, tt.SLO)
		}
		want := fmt.Sprintf("invalidations  expected %d = delivered %d + lost 0", m.Delivered, m.Delivered)
		testrun.Contains(t, stdout, want, "per reader", "invalidation ", "slo: pass")
		code, rep, stderr := pacer(t, "report", out)
		if code != exitOK {
			t.Fatalf("report: exit %d %s", code, stderr)
		}
		testrun.Contains(t, rep, want, "SET 64 B values to 50 keys cached by 4 readers")
	}
}

// TestTrackingHotKey: writes faster than a reader refetches one key: in
// default mode the writes between an invalidation and its refetch found
// no copy (uncached, not lost); in BCAST the server gathers a key's
// writes of one pass into one invalidation, and each still counts from
// its own intended instant, none lost and none dated by a later write.
func TestTrackingHotKey(t *testing.T) {
	testrun.SkipShort(t, "writes one cached key of a redis-server at 20k/s for 1 s, twice")
	testrun.SkipRace(t, "judges the attribution of 20k writes/s")
	rs := redistest.Start(t)
	for _, bcast := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "tracking.json")
		args := []string{"tracking", "-p", rs.PortString(), "--rate", "20k", "-n", "20000", "--keys", "1", "--readers", "3", "--json", out}
		if bcast {
			args = append(args, "--bcast")
		}
		code, stdout, stderr := pacer(t, args...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("bcast %v: exit %d\n%s\n%s", bcast, code, stdout, stderr)
		}
		tt := resultDocument(t, out).Tests[0]
		m, v := tt.Messages, tt.Messages.Tracking
		t.Logf("bcast %v: expected %d delivered %d lost %d; pushes %d uncached %d; p50 %.3f ms p99 %.3f ms",
			bcast, m.Expected, m.Delivered, m.Lost, v.Pushes, v.Uncached, tt.ResponseMs.P50, tt.ResponseMs.P99)
		if m.Lost != 0 || v.StaleAtEnd != 0 {
			t.Errorf("bcast %v: lost %d, stale %d", bcast, m.Lost, v.StaleAtEnd)
		}
		if bcast && (m.Delivered != 60000 || v.Pushes >= 60000) {
			t.Errorf("BCAST: delivered %d of 60000 in %d pushes; want all, gathered into fewer pushes", m.Delivered, v.Pushes)
		}
		if !bcast && (v.Uncached == 0 || m.Delivered+v.Uncached != 60000) {
			t.Errorf("default: delivered %d + uncached %d, want 60000 with some uncached", m.Delivered, v.Uncached)
		}
		// A write dated by a later one would drift by whole rounds of
		// writes: the latencies stay those of a server that keeps up.
		if tt.ResponseMs.P99 > 50 {
			t.Errorf("bcast %v: invalidation p99 %.3f ms", bcast, tt.ResponseMs.P99)
		}
	}
}

// TestTrackingServerPaused: redis-server stopped (SIGSTOP) for 100 ms
// every second under 5k writes/s: a tenth of the writes are intended
// inside a pause, so the invalidation p99 is near 90 ms from their
// intended instants; nothing is lost.
func TestTrackingServerPaused(t *testing.T) {
	testrun.SkipShort(t, "pauses a redis-server for 3 s under cached writes")
	testrun.SkipRace(t, "judges invalidation latencies against the pauses")
	rs := redistest.Start(t)
	stop := pauseEverySecond(t, rs, 100*time.Millisecond)
	out := filepath.Join(t.TempDir(), "tracking.json")
	code, stdout, stderr := pacer(t, "tracking", "-p", rs.PortString(), "--rate", "5k", "--duration", "3s", "--readers", "5", "--json", out)
	stop()
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	tt := resultDocument(t, out).Tests[0]
	t.Logf("invalidation p99 %.3f ms (p99.9 %.3f), lost %d; verdict %s", tt.ResponseMs.P99, tt.ResponseMs.P999, tt.Messages.Lost, tt.Verdict)
	if tt.ResponseMs.P99 < 80 || tt.Messages.Lost != 0 {
		t.Errorf("invalidation p99 %.3f ms, lost %d; want about 90 ms and none", tt.ResponseMs.P99, tt.Messages.Lost)
	}
}

// TestTrackingReaderKilled: a reader the server disconnects (CLIENT KILL)
// mid-run is an event; the keys it was left holding older than their
// last write are its lost invalidations, and loss<=0 exits 3. The run
// ends on its own.
func TestTrackingReaderKilled(t *testing.T) {
	testrun.SkipShort(t, "kills a reader of a redis-server mid-run")
	t.Parallel()
	rs := redistest.Start(t)
	go func() {
		time.Sleep(time.Second)
		list, err := rs.Do("CLIENT", "LIST")
		if err != nil {
			t.Error(err)
			return
		}
		for _, l := range strings.Split(list, "\n") {
			if strings.Contains(l, "name=pacer-tracking-reader-2 ") {
				id := strings.TrimPrefix(strings.Fields(l)[0], "id=")
				if _, err := rs.Do("CLIENT", "KILL", "ID", id); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	out := filepath.Join(t.TempDir(), "tracking.json")
	start := time.Now()
	code, stdout, stderr := pacer(t, "tracking", "-p", rs.PortString(), "--rate", "2k", "--duration", "3s", "--keys", "100", "--readers", "3",
		"--slo", "loss<=0", "--json", out)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %s", took)
	}
	if code != exitSLO {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	m := resultDocument(t, out).Tests[0].Messages
	if len(m.Events) != 1 || m.Events[0].Receiver != "reader 2" || m.Events[0].Missed == 0 || m.Events[0].Missed != m.Lost ||
		m.Lost != m.Tracking.StaleAtEnd || m.Lost > 100 || m.Receivers[0].Lost != 0 || m.Receivers[2].Lost != 0 {
		t.Fatalf("events %+v, lost %d, tracking %+v, receivers %+v", m.Events, m.Lost, m.Tracking, m.Receivers)
	}
	// Killed with its refetch unread, it is reset rather than closed, or
	// its next refetch meets the reset (a broken pipe): either way the
	// server closed it.
	testrun.Contains(t, stdout, "event          reader 2: the server closed the connection", "STALE at the end")
}

// TestTrackingAgreesWithAnIndependentReader: against redis-server, a
// reader written here, on its own RESP3 connection, with its own reads of
// the kernel's receive timestamps, tracks one key and refetches it after
// each invalidation, dating the invalidation by the write its refetch
// returns; it sees what pacer's readers see, give or take their places in
// the server's order and the machine's noise. The differences are logged;
// the check is that no invalidation is dated by the wrong write.
func TestTrackingAgreesWithAnIndependentReader(t *testing.T) {
	testrun.SkipShort(t, "writes 10 cached keys of a redis-server at 5k/s for 4 s")
	testrun.SkipRace(t, "compares latencies to the microsecond")
	rs := redistest.Start(t)
	ref := trackAlone(t, rs.Addr, "pacer:cache:0")
	out := filepath.Join(t.TempDir(), "tracking.json")
	code, stdout, stderr := pacer(t, "tracking", "-p", rs.PortString(), "--rate", "5k", "--duration", "4s", "--keys", "10", "--readers", "5", "--json", out)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	h := ref.stop(t)
	tt := resultDocument(t, out).Tests[0]
	// Key 0 is written every 2 ms: a refetch that a loaded machine holds
	// longer finds a later write, whose invalidation never comes, so the
	// reader may date fewer than 2000; half is enough to compare.
	if tt.Messages.Lost != 0 || h.TotalCount() < 1000 {
		t.Fatalf("lost %d; the independent reader dated %d invalidations of key 0 (want about 2000)", tt.Messages.Lost, h.TotalCount())
	}
	p50, p99 := histo.Millis(h.ValueAtQuantile(50)), histo.Millis(h.ValueAtQuantile(99))
	d50, d99 := (tt.ResponseMs.P50-p50)*1000, (tt.ResponseMs.P99-p99)*1000
	// The server writes an invalidation to the readers of a key one after
	// another: each reader has a latency of its own.
	lo50, hi50 := 1e9, 0.0
	for _, r := range tt.Messages.Receivers {
		lo50, hi50 = min(lo50, r.LatencyMs.P50), max(hi50, r.LatencyMs.P50)
	}
	t.Logf("invalidation p50 pacer %.3f ms, independent %.3f ms (%+.1f µs; pacer's readers' own p50s %.3f to %.3f ms, 2 digits); p99 pacer %.3f ms, independent %.3f ms (%+.1f µs, %+.2f%%); verdict %s",
		tt.ResponseMs.P50, p50, d50, lo50, hi50, tt.ResponseMs.P99, p99, d99, 100*(tt.ResponseMs.P99-p99)/p99, tt.Verdict)
	// What this can catch is an invalidation dated by the wrong write:
	// key 0 is written every 2 ms (10 keys at 5k/s), so a wrong write moves
	// the figures by whole 2 ms. The rest is the two readers' places in the
	// server's order and the machine: readers descheduled for a while find
	// the segments that came meanwhile merged, dated by the last (the
	// wire's test, TestPubsubAgreesWithTheWire, measures that), which a
	// shared machine made +54% at p99 once in .ci/run.
	// A run whose own verdict distrusts it (the client host's noise:
	// generator_behind, inconclusive) cannot be held to that: beside two
	// busy loops pacer's readers came 2.6 ms behind at p99, and said so.
	if tt.Verdict != report.VerdictOK {
		t.Logf("not compared: pacer's verdict %s (%s)", tt.Verdict, tt.VerdictReason)
		return
	}
	if abs(d50) > 1000 || abs(d99) > 2000 {
		t.Errorf("pacer's invalidations and the independent reader's disagree by a write of the key or more: p50 %+.1f µs, p99 %+.1f µs", d50, d99)
	}
}

// trackAlone starts the independent reader of key: RESP3 parsed by hand
// from raw socket reads stamped by the kernel (rxstamp).
func trackAlone(t *testing.T, addr, key string) *lone {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rd := rxstamp.New(nc, clock.Now)
	if rd == nil {
		t.Skip("no kernel receive timestamps on this platform")
	}
	get := "*2\r\n$3\r\nGET\r\n$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n"
	if _, err := nc.Write([]byte("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n" + get)); err != nil {
		t.Fatal(err)
	}
	l := &lone{nc: nc, h: histo.New(), done: make(chan error, 1)}
	go func() {
		var buf []byte
		chunk := make([]byte, 64<<10)
		var pushAt int64 // the arrival of the invalidation the next value dates
		for {
			n, err := rd.Read(chunk)
			if err != nil {
				l.done <- nil
				return
			}
			at := clock.Now()
			if a := rd.Arrival(); rxstamp.Plausible(a, at) {
				at = a
			}
			buf = append(buf, chunk[:n]...)
			for {
				// An invalidation push, or the value of a refetch; the
				// HELLO map and +OK before them are skipped by line.
				if i := bytes.Index(buf, []byte(">2\r\n$10\r\ninvalidate\r\n")); i == 0 {
					end := bytes.Index(buf, []byte(key+"\r\n"))
					if end < 0 {
						break
					}
					buf = buf[end+len(key)+2:]
					pushAt = at
					if _, err := nc.Write([]byte(get)); err != nil {
						l.done <- nil
						return
					}
					continue
				}
				if len(buf) > 0 && buf[0] == '$' {
					i := bytes.Index(buf, []byte("\r\n"))
					if i < 0 {
						break
					}
					size, _ := strconv.Atoi(string(buf[1:i]))
					if len(buf) < i+2+size+2 {
						break
					}
					if h, ok := messages.ParseHeader(buf[i+2 : i+2+size]); ok && pushAt != 0 {
						_ = l.h.RecordValue(max(pushAt-h.Intended, 0))
					}
					pushAt = 0
					buf = buf[i+2+size+2:]
					continue
				}
				// Anything else (the handshake's replies): up to the next
				// value or push.
				j := bytes.IndexAny(buf[min(1, len(buf)):], "$>")
				if j < 0 {
					buf = buf[:0]
					break
				}
				buf = buf[j+1:]
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // tracking on and the key read before the writes
	return l
}
