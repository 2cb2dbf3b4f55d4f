package conn

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
)

// mustDial dials o for a test that cannot go on without the connection.
func mustDial(t *testing.T, o Options) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collect is a Handler that remembers what it saw.
type collect struct {
	mu      sync.Mutex
	entries []Entry
	errs    int
	got     chan struct{}
}

func newCollect() *collect { return &collect{got: make(chan struct{}, 1<<16)} }

func (c *collect) Reply(e *Entry, r Reply, _ Times) {
	c.mu.Lock()
	c.entries = append(c.entries, *e)
	if r.Err {
		c.errs++
	}
	c.mu.Unlock()
	c.got <- struct{}{}
}

func (c *collect) wait(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-c.got:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d replies", i, n)
		}
	}
}

// echoServer answers every complete line-terminated... it answers one
// reply per command of the fixed size cmdLen.
func loopback(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		handle(c)
		c.Close()
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

func TestFIFOOrderAndWriteStamps(t *testing.T) {
	cmd := AppendCommand(nil, "PING")
	addr := loopback(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		got := 0
		for got < 10*len(cmd) {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			got += n
			for k := 0; k < n/len(cmd); k++ {
				c.Write([]byte("+PONG\r\n"))
			}
		}
		time.Sleep(50 * time.Millisecond)
	})
	clock := int64(1000)
	c := mustDial(t, Options{Addr: addr, Now: func() int64 { return clock }})
	defer c.Close()
	h := newCollect()
	c.Start(h)
	for i := 0; i < 10; i++ {
		c.Queue(cmd, int64(i), uint32(i))
	}
	if c.Written() != 0 || c.InFlight() != 10 || !c.Pending() {
		t.Fatalf("before Flush: written %d inflight %d pending %v", c.Written(), c.InFlight(), c.Pending())
	}
	if err := c.Flush(777); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 10)
	for i, e := range h.entries {
		if e.Kind != uint32(i) || e.Intended != int64(i) || e.Written != 777 {
			t.Fatalf("entry %d = %+v: want FIFO order and the flush's write time", i, e)
		}
	}
	// The reader advances the FIFO right after the handler returns.
	for deadline := time.Now().Add(5 * time.Second); c.InFlight() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if c.InFlight() != 0 || c.Written() != 10 {
		t.Fatalf("after replies: inflight %d written %d", c.InFlight(), c.Written())
	}
}

// TestUnsolicitedReplyIsCountedNotMatched: a reply the server sends before
// any request is counted and skipped; the connection lives on and the next
// request gets its own reply.
func TestUnsolicitedReplyIsCountedNotMatched(t *testing.T) {
	srv := hostile.Start(t, hostile.UnsolicitedFirst)
	c := mustDial(t, Options{Addr: srv.Addr})
	defer c.Close()
	h := newCollect()
	c.Start(h)
	waitFor(t, "the unsolicited reply", func() bool { return c.Unsolicited() == 1 })
	c.Queue(AppendCommand(nil, "PING"), 0, 7)
	if err := c.Flush(clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 1)
	if c.Err() != nil || c.Dead() || c.Unsolicited() != 1 || h.entries[0].Kind != 7 {
		t.Fatalf("err %v dead %v unsolicited %d entries %+v", c.Err(), c.Dead(), c.Unsolicited(), h.entries)
	}
}

// TestDefaultClockTimesReplies: without Options.Now a connection still
// stamps replies on the monotonic clock, never 0.
func TestDefaultClockTimesReplies(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	c := mustDial(t, Options{Addr: srv.Addr})
	defer c.Close()
	var at atomic.Int64
	got := make(chan struct{}, 1)
	c.Start(handlerFunc(func(e *Entry, r Reply, t Times) { at.Store(t.Arrival - e.Written); got <- struct{}{} }))
	written := clock.Now()
	c.Queue(AppendCommand(nil, "PING"), written, 0)
	if err := c.Flush(written); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(hangLimit):
		t.Fatal("no reply")
	}
	if at.Load() <= 0 {
		t.Fatalf("reply stamped %d ns after its write", at.Load())
	}
}

type handlerFunc func(e *Entry, r Reply, t Times)

func (f handlerFunc) Reply(e *Entry, r Reply, t Times) { f(e, r, t) }

// TestReadReplyAfterSkipsEarlierReplies: on the synchronous path a doubled
// reply, read before the next request was written, is not its reply.
func TestReadReplyAfterSkipsEarlierReplies(t *testing.T) {
	srv := hostile.Start(t, hostile.DoubleReply)
	c := mustDial(t, Options{Addr: srv.Addr, SkipProbe: true})
	defer c.Close()
	for i := range 3 {
		start := clock.Now()
		if err := c.Write(AppendCommand(nil, "PING")); err != nil {
			t.Fatal(err)
		}
		if _, at, err := c.ReadReplyAfter(start); err != nil || at.Read < start || at.Arrival < start || at.Arrival > at.Read {
			t.Fatalf("request %d: reply at %+v for a write at %d, err %v", i, at, start, err)
		}
		// Both replies came in one read: the double is buffered now.
		if c.rd.r == c.rd.w {
			t.Fatal("the doubled reply did not arrive with the first")
		}
	}
	if c.Unsolicited() != 2 {
		t.Fatalf("unsolicited %d, want 2", c.Unsolicited())
	}
}

// TestPartialWritePublishesWholeCommands: a Flush that the socket buffer
// cuts short inside the queued bytes (checked: the split happens) makes
// only the commands it wrote completely visible to the reader; the rest
// follows, in order, as the server reads.
func TestPartialWritePublishesWholeCommands(t *testing.T) {
	cmd := bigCommand(100_000 + 7) // a size that makes a cut at a command boundary unlikely
	const n = 200                  // 20 MB: more than the socket buffers hold
	read := make(chan struct{})
	addr := loopback(t, func(s net.Conn) {
		<-read
		pongServer(len(cmd))(s)
	})
	c := mustDial(t, Options{Addr: addr, SkipProbe: true, MaxBuffer: n * len(cmd)})
	defer c.Close()
	h := newCollect()
	c.Start(h)
	for i := range n {
		c.Queue(cmd, int64(i), uint32(i))
	}
	if err := c.Flush(1); err != nil {
		t.Fatal(err)
	}
	if c.flushed == 0 || !c.Pending() {
		t.Fatalf("the first Flush wrote %d of %d bytes: no split to test", c.flushed, c.queued)
	}
	if whole := c.flushed / uint64(len(cmd)); c.Written() != whole {
		t.Fatalf("%d bytes written, %d whole commands, %d published", c.flushed, whole, c.Written())
	}
	close(read)
	for now := int64(2); c.Pending(); now++ {
		if err := c.Flush(now); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	h.wait(t, n)
	for i, e := range h.entries {
		if e.Kind != uint32(i) || e.Written < 1 {
			t.Fatalf("entry %d = %+v", i, e)
		}
	}
}

func TestServerCloseLeavesUnansweredForAccounting(t *testing.T) {
	cmd := AppendCommand(nil, "PING")
	addr := loopback(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		n, _ := c.Read(buf)
		_ = n
		c.Write([]byte("+PONG\r\n+PONG\r\n")) // answer 2 of 5, then hang up
	})
	c, err := Dial(context.Background(), Options{Addr: addr, SkipProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	h := newCollect()
	c.Start(h)
	for i := 0; i < 5; i++ {
		c.Queue(cmd, 0, 0)
	}
	if err := c.Flush(1); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 2)
	<-c.Done()
	c.Close()
	if c.Err() == nil {
		t.Fatal("a server hang-up is not reported")
	}
	unanswered := 0
	c.Unanswered(func(*Entry) { unanswered++ })
	if unanswered != 3 || c.Unwritten() != 0 {
		t.Fatalf("unanswered %d unwritten %d, want 3 and 0", unanswered, c.Unwritten())
	}
	// A closed connection refuses further flushes.
	c.Queue(cmd, 0, 0)
	if err := c.Flush(2); err == nil {
		t.Fatal("flush on a dead connection succeeded")
	}
}

func TestFreeRespectsMaxInflight(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := New(a, Options{MaxInflight: 3})
	defer c.Close()
	for i := 3; i > 0; i-- {
		if c.Free() != i {
			t.Fatalf("Free = %d, want %d", c.Free(), i)
		}
		c.Queue([]byte("PING\r\n"), 0, 0)
	}
	if c.Free() != 0 {
		t.Fatalf("Free = %d with the FIFO full", c.Free())
	}
}

func TestHandshakeAgainstRedis(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "s3cret")
	ctx := context.Background()
	if _, err := Dial(ctx, Options{Addr: srv.Addr, Password: "wrong"}); err == nil || !strings.Contains(err.Error(), `AUTH as user "default" failed`) {
		t.Fatalf("wrong password: %v", err)
	}
	c, err := Dial(ctx, Options{Addr: srv.Addr, Password: "s3cret", DB: 3, RESP3: true})
	if err != nil {
		t.Fatal(err)
	}
	h := newCollect()
	c.Start(h)
	c.Queue(AppendCommand(nil, "SET", "handshake-key", "v"), 0, 0)
	if err := c.FlushBlocking(0); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 1)
	c.Close()
	if h.errs != 0 {
		t.Fatal("SET failed after the handshake")
	}
	// The key went to database 3.
	c3, err := Dial(ctx, Options{Addr: srv.Addr, Password: "s3cret", DB: 3})
	if err != nil {
		t.Fatal(err)
	}
	h3 := newCollect()
	c3.Start(h3)
	c3.Queue(AppendCommand(nil, "GET", "missing-in-db3"), 0, 0)
	c3.Queue(AppendCommand(nil, "INCR", "handshake-key"), 0, 0) // a string: WRONGTYPE? no: not an integer
	if err := c3.FlushBlocking(0); err != nil {
		t.Fatal(err)
	}
	h3.wait(t, 2)
	c3.Close()
	if h3.errs != 1 {
		t.Fatalf("INCR on the string in db 3 gave %d errors, want 1", h3.errs)
	}
	if _, err := Dial(ctx, Options{Addr: srv.Addr, Password: "s3cret", DB: 99}); err == nil || !strings.Contains(err.Error(), "SELECT failed") {
		t.Fatalf("SELECT 99: %v", err)
	}
}

func TestDialAllReportsTheFailure(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens now
	_, err := DialAll(context.Background(), Options{Addr: addr, DialTimeout: time.Second}, 3)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err %v", err)
	}
}

func TestQueueAndFlushDoNotAllocate(t *testing.T) {
	cmd := AppendCommand(nil, "PING")
	addr := loopback(t, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			out := make([]byte, 0, n)
			for k := 0; k < n/len(cmd); k++ {
				out = append(out, "+PONG\r\n"...)
			}
			c.Write(out)
		}
	})
	c := mustDial(t, Options{Addr: addr, Now: func() int64 { return 1 }})
	defer c.Close()
	h := &countReplies{}
	c.Start(h)
	allocs := testing.AllocsPerRun(2000, func() {
		for c.Free() < 8 {
			time.Sleep(time.Microsecond)
		}
		for i := 0; i < 8; i++ {
			c.Queue(cmd, 0, 0)
		}
		if err := c.Flush(1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per queue-and-flush of 8 commands, want 0", allocs)
	}
}

// countReplies is a Handler that only counts, so it allocates nothing.
type countReplies struct{ n atomic.Int64 }

func (c *countReplies) Reply(*Entry, Reply, Times) { c.n.Add(1) }

// TestWriteFailureKeepsTheRepliesThatArrived: a server that answers and
// then hangs up leaves its last replies in the socket's receive queue. A
// write that fails on the reset before the reader got to them must not
// close the socket under the reader: in the CI they were lost, and every
// request of the connection counted as an error.
func TestWriteFailureKeepsTheRepliesThatArrived(t *testing.T) {
	writeFailureKeepsReplies(t, func(c *Conn, h Handler) { c.Start(h) })
}

// writeFailureKeepsReplies is TestWriteFailureKeepsTheRepliesThatArrived
// with the reader that start starts (a goroutine, or a hub).
func writeFailureKeepsReplies(t *testing.T, start func(c *Conn, h Handler)) {
	cmd := AppendCommand(nil, "PING")
	const n = 5
	held := make(chan struct{})
	addr := loopback(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for got := 0; got < n*len(cmd); {
			k, err := c.Read(buf)
			if err != nil {
				return
			}
			got += k
		}
		c.Write([]byte("+PONG\r\n"))
		<-held // the reader waits in Reply: the rest stays in the kernel
		c.Write(bytes.Repeat([]byte("+PONG\r\n"), n-1))
	})
	c := mustDial(t, Options{Addr: addr, SkipProbe: true})
	defer c.Close()
	g := newGate()
	start(c, g)
	for range n {
		c.Queue(cmd, 0, 0)
	}
	if err := c.Flush(1); err != nil {
		t.Fatal(err)
	}
	<-g.got
	close(held)
	// The server has hung up: a write draws its reset, the next one fails.
	waitFor(t, "a failed write", func() bool {
		c.Queue(cmd, 0, 0)
		return c.Flush(2) != nil
	})
	for range n {
		g.release <- struct{}{}
	}
	for i := 1; i < n; i++ {
		select {
		case <-g.got:
		case <-time.After(hangLimit):
			t.Fatalf("%d of %d replies: the rest were lost with the socket", i, n)
		}
	}
	<-c.Done()
	if c.Err() == nil {
		t.Fatal("the failed write is not reported")
	}
}
