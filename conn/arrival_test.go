package conn

import (
	"context"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/internal/testrun"
)

// kernelStamps says whether this platform gives TCP receive timestamps.
var kernelStamps = runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")

// stamp is what a handler saw of one reply.
type stamp struct {
	written int64
	t       Times
}

// stamps is a Handler that keeps every reply's instants.
type stamps struct {
	mu  sync.Mutex
	got []stamp
	ch  chan struct{}
}

func newStamps() *stamps { return &stamps{ch: make(chan struct{}, 1<<14)} }

func (s *stamps) Reply(e *Entry, r Reply, t Times) {
	s.mu.Lock()
	s.got = append(s.got, stamp{e.Written, t})
	s.mu.Unlock()
	s.ch <- struct{}{}
}

// pingEach sends n PINGs one at a time, each once the previous one was
// answered, and returns what the handler saw.
func pingEach(t *testing.T, c *Conn, n int) []stamp {
	t.Helper()
	return ping(t, c, n, false)
}

// pingUntilKernel is pingEach that goes on, for up to a few seconds, until
// a reply carried a kernel timestamp where the platform has them: Linux
// turns receive stamping on for the whole host in a deferred work item the
// first time a socket asks (net_enable_timestamp), so on a busy machine
// the first replies of a process may come unstamped.
func pingUntilKernel(t *testing.T, c *Conn, n int) []stamp {
	t.Helper()
	return ping(t, c, n, kernelStamps)
}

func ping(t *testing.T, c *Conn, n int, untilKernel bool) []stamp {
	t.Helper()
	h := newStamps()
	c.Start(h)
	cmd := AppendCommand(nil, "PING")
	deadline := time.Now().Add(hangLimit)
	for i := 0; i < n || untilKernel && c.ReceiveClock() != ReceiveKernel && time.Now().Before(deadline); i++ {
		now := clock.Now()
		c.Queue(cmd, now, 0)
		if err := c.Flush(now); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.ch:
		case <-time.After(hangLimit):
			t.Fatalf("no reply to PING %d", i)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// checkTimes checks every reply's instants: written ≤ Arrival ≤ Read, and
// Arrival == Read where the connection had no kernel timestamp.
func checkTimes(t *testing.T, c *Conn, got []stamp) {
	t.Helper()
	earlier := 0
	for i, s := range got {
		if s.t.Arrival < s.written || s.t.Arrival > s.t.Read {
			t.Fatalf("reply %d: written %d, arrival %d, read %d", i, s.written, s.t.Arrival, s.t.Read)
		}
		if c.ReceiveClock() == ReceiveRead && s.t.Arrival != s.t.Read {
			t.Fatalf("reply %d: arrival %d ≠ read %d without kernel timestamps", i, s.t.Arrival, s.t.Read)
		}
		if s.t.Arrival < s.t.Read {
			earlier++
		}
	}
	t.Logf("receive clock %q; %d of %d arrivals before their read", c.ReceiveClock(), earlier, len(got))
}

func TestKernelArrivalOverTCP(t *testing.T) {
	checkKernelArrival(t, "loopback TCP", Options{Addr: loopback(t, pongs)})
}

func TestKernelArrivalOverTLS(t *testing.T) {
	srv, cli := tlsPair(t)
	checkKernelArrival(t, "TLS", Options{Addr: tlsLoopback(t, srv, pongs), TLS: cli})
}

// checkKernelArrival pings a server that answers PONG over o until the
// connection reads a kernel timestamp (or 50 times), checks the replies'
// instants and, where the kernel stamps (Linux), that it did.
func checkKernelArrival(t *testing.T, over string, o Options) {
	t.Helper()
	c := mustDial(t, o)
	defer c.Close()
	got := pingUntilKernel(t, c, 50)
	checkTimes(t, c, got)
	if kernelStamps && c.ReceiveClock() != ReceiveKernel {
		t.Fatalf("ReceiveClock %q over %s on Linux", c.ReceiveClock(), over)
	}
}

// TestArrivalOverUnixSocket: Linux stamps no AF_UNIX stream data, so such
// a connection reports the read clock; the instants hold either way.
func TestArrivalOverUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if sc, err := ln.Accept(); err == nil {
			pongs(sc)
			sc.Close()
		}
	}()
	defer func() { ln.Close(); <-done }()
	c := mustDial(t, Options{Network: "unix", Addr: path})
	defer c.Close()
	checkTimes(t, c, pingEach(t, c, 20))
}

// TestPipeArrivalIsTheReadInstant: a transport without a socket has no
// kernel timestamp.
func TestPipeArrivalIsTheReadInstant(t *testing.T) {
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() { defer close(done); pongs(b) }()
	c := New(a, Options{})
	got := pingEach(t, c, 10)
	c.Close()
	b.Close()
	<-done
	if c.ReceiveClock() != ReceiveRead {
		t.Fatalf("ReceiveClock %q over net.Pipe", c.ReceiveClock())
	}
	checkTimes(t, c, got)
}

// TestReceiveClockReadForcesTheReadInstant: Options.ReceiveClock "read"
// keeps the old behaviour on a socket that has timestamps.
func TestReceiveClockReadForcesTheReadInstant(t *testing.T) {
	addr := loopback(t, pongs)
	c := mustDial(t, Options{Addr: addr, ReceiveClock: ReceiveRead})
	defer c.Close()
	got := pingEach(t, c, 20)
	if c.ReceiveClock() != ReceiveRead {
		t.Fatalf("ReceiveClock %q with Options.ReceiveClock read", c.ReceiveClock())
	}
	checkTimes(t, c, got)
}

func TestReceiveClockOptionIsChecked(t *testing.T) {
	if _, err := Dial(context.Background(), Options{Addr: "127.0.0.1:1", ReceiveClock: "nic"}); err == nil {
		t.Fatal("Dial took receive clock \"nic\"")
	}
}

// TestReadReplyCarriesKernelArrival: the synchronous path has both
// instants too.
func TestReadReplyCarriesKernelArrival(t *testing.T) {
	addr := loopback(t, pongs)
	c := mustDial(t, Options{Addr: addr, SkipProbe: true})
	defer c.Close()
	deadline := time.Now().Add(hangLimit) // see pingUntilKernel
	for i := 0; i < 10 || kernelStamps && c.ReceiveClock() != ReceiveKernel && time.Now().Before(deadline); i++ {
		start := clock.Now()
		if err := c.Write(AppendCommand(nil, "PING")); err != nil {
			t.Fatal(err)
		}
		_, tm, err := c.ReadReplyAfter(start)
		if err != nil || tm.Arrival < start || tm.Arrival > tm.Read {
			t.Fatalf("reply %d: %+v for a write at %d, %v", i, tm, start, err)
		}
	}
	if kernelStamps && c.ReceiveClock() != ReceiveKernel {
		t.Fatalf("ReceiveClock %q", c.ReceiveClock())
	}
}

// TestArrivalAgainstTheSink: 2,000 PINGs at about 2k/s on one connection;
// each reply's arrival is checked against the instant the sink began
// writing it. The kernel's arrival is never before that write, and is
// close to it (a sanity bound, not a timing claim: bench/rxspread
// measures).
func TestArrivalAgainstTheSink(t *testing.T) {
	testrun.SkipShort(t, "paced for one second")
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := mustDial(t, Options{Addr: s.Addr(), SkipProbe: true})
	defer c.Close()
	const n = 2000
	const period = int64(500 * time.Microsecond)
	h := newStamps()
	c.Start(h)
	cmd := AppendCommand(nil, "PING")
	t0 := clock.Now()
	for i := range int64(n) {
		clock.SleepUntil(t0 + i*period)
		now := clock.Now()
		c.Queue(cmd, t0+i*period, 0)
		if err := c.Flush(now); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		select {
		case <-h.ch:
		case <-time.After(hangLimit):
			t.Fatalf("only %d of %d replies", i, n)
		}
	}
	// The sink records a command just after its reply's write.
	recs := s.Records()
	for deadline := time.Now().Add(hangLimit); len(recs) < n && time.Now().Before(deadline); recs = s.Records() {
		time.Sleep(time.Millisecond)
	}
	if len(recs) != n {
		t.Fatalf("the sink recorded %d commands, want %d", len(recs), n)
	}
	h.mu.Lock()
	got := slices.Clone(h.got)
	h.mu.Unlock()
	checkTimes(t, c, got)
	arrive, read := make([]int64, n), make([]int64, n)
	for i, s := range got {
		arrive[i], read[i] = s.t.Arrival-recs[i].Replied, s.t.Read-recs[i].Replied
		if arrive[i] < 0 {
			t.Fatalf("reply %d arrived %d ns before the sink wrote it", i, -arrive[i])
		}
	}
	slices.Sort(arrive)
	slices.Sort(read)
	q := func(v []int64, p float64) time.Duration { return time.Duration(v[int(p*float64(len(v)-1))]) }
	t.Logf("sink write -> arrival p50 %v p99 %v p99.9 %v max %v", q(arrive, .5), q(arrive, .99), q(arrive, .999), q(arrive, 1))
	t.Logf("sink write -> read    p50 %v p99 %v p99.9 %v max %v", q(read, .5), q(read, .99), q(read, .999), q(read, 1))
	if p50 := q(arrive, .5); p50 > time.Millisecond {
		t.Fatalf("arrival p50 %v after the sink's write", p50)
	}
}

// TestStampedReadsDoNotAllocate: replies read with kernel timestamps on
// the real clock cost no allocation.
func TestStampedReadsDoNotAllocate(t *testing.T) {
	cmd := AppendCommand(nil, "PING")
	addr := loopback(t, pongServer(len(cmd)))
	c := mustDial(t, Options{Addr: addr, SkipProbe: true})
	defer c.Close()
	h := &countReplies{}
	c.Start(h)
	sent := int64(0)
	batch := func() {
		for i := 0; i < 8; i++ {
			c.Queue(cmd, 0, 0)
		}
		sent += 8
		if err := c.Flush(clock.Now()); err != nil {
			t.Fatal(err)
		}
		for h.n.Load() < sent {
			time.Sleep(time.Microsecond) // parks, so the netpoller runs
		}
	}
	// Until the stamps flow (see pingUntilKernel), so their conversion is
	// what is measured.
	for deadline := time.Now().Add(hangLimit); kernelStamps && c.ReceiveClock() != ReceiveKernel; batch() {
		if time.Now().After(deadline) {
			t.Fatalf("ReceiveClock %q", c.ReceiveClock())
		}
	}
	if allocs := testing.AllocsPerRun(2000, batch); allocs != 0 {
		t.Fatalf("%.1f allocations per 8 commands sent and read, want 0", allocs)
	}
}
