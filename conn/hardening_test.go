package conn

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// hangLimit is how long a dial that should return at once may take before
// a test calls it hung. It is far below the dial timeouts the tests set, and
// far above any scheduling delay of a loaded machine.
const (
	hangLimit      = 5 * time.Second
	longDialTimout = 60 * time.Second
)

// unwritten returns the bytes queued and not yet written.
func (c *Conn) unwritten() int { return int(c.queued - c.flushed) }

// bigCommand returns a SET whose value has n bytes.
func bigCommand(n int) []byte {
	return AppendCommand(nil, "SET", "k", strings.Repeat("v", n))
}

// TestFreeStopsAtMaxBuffer: against a server that never reads, the
// unwritten bytes stop growing at the budget (plus one command), instead of
// reaching MaxInflight commands.
func TestFreeStopsAtMaxBuffer(t *testing.T) {
	srv := hostile.Start(t, hostile.NeverRead)
	const budget = 64 << 10
	c := mustDial(t, Options{Addr: srv.Addr, MaxBuffer: budget, SkipProbe: true})
	defer c.Close()
	cmd := bigCommand(16 << 10)
	// The kernel's socket buffers take some megabytes first; 4000 commands
	// of 16 KiB (64 MB) are far more than they hold.
	queued := 0
	for ; queued < 4000 && c.Free() > 0; queued++ {
		c.Queue(cmd, 0, 0)
		if err := c.Flush(clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if c.Free() != 0 {
		t.Fatalf("Free = %d after %d commands of %d bytes to a server that never reads", c.Free(), queued, len(cmd))
	}
	if n := c.unwritten(); n < budget || n >= budget+len(cmd) {
		t.Fatalf("%d bytes unwritten, want the budget %d plus less than one command", n, budget)
	}
}

// TestEmptyBufferTakesOneCommand: a command larger than the budget is still
// accepted when nothing is buffered, and nothing more until it is written.
func TestEmptyBufferTakesOneCommand(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := New(a, Options{MaxBuffer: 1 << 10})
	defer c.Close()
	if c.Free() == 0 {
		t.Fatal("an empty buffer refuses a command")
	}
	c.Queue(bigCommand(4<<10), 0, 0)
	if c.Free() != 0 {
		t.Fatalf("Free = %d with %d bytes over a 1 KiB budget", c.Free(), c.unwritten())
	}
}

// TestBurstBufferIsReleased: a burst queued past Free grows the output
// buffer; once it is written, the memory goes back, on both flush paths.
func TestBurstBufferIsReleased(t *testing.T) {
	for _, blocking := range []bool{true, false} {
		srv := hostile.Start(t, hostile.Silent)
		const budget = 64 << 10
		c, err := Dial(context.Background(), Options{Addr: srv.Addr, MaxBuffer: budget, SkipProbe: true})
		if err != nil {
			t.Fatal(err)
		}
		cmd := bigCommand(64 << 10)
		for range 100 { // 6.4 MB, a hundred times the budget
			c.Queue(cmd, 0, 0)
		}
		if blocking {
			err = c.FlushBlocking(clock.Now())
		} else {
			for deadline := time.Now().Add(hangLimit); err == nil && c.Pending() && time.Now().Before(deadline); {
				err = c.Flush(clock.Now())
				runtime.Gosched()
			}
		}
		if err != nil || c.Pending() {
			t.Fatalf("blocking %v: err %v, pending %v", blocking, err, c.Pending())
		}
		if c.Written() != 100 {
			t.Fatalf("blocking %v: %d commands published, want 100", blocking, c.Written())
		}
		if got := cap(c.out); got > shrinkFactor*budget {
			t.Fatalf("blocking %v: output buffer keeps %d bytes after the burst, budget %d", blocking, got, budget)
		}
		c.Close()
	}
}

// TestCompactShrinksAnOversizedBuffer: a buffer that never empties after a
// burst is moved into one of budget size when it is compacted.
func TestCompactShrinksAnOversizedBuffer(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	const budget = 4 << 10
	c := New(a, Options{MaxBuffer: budget})
	defer c.Close()
	cmd := bigCommand(1 << 10)
	for range 100 {
		c.Queue(cmd, 0, 0)
	}
	c.advance(99*len(cmd)+10, 1) // all but the end of the last command written
	c.Queue(cmd, 0, 0)           // compacts
	if got := cap(c.out); got > shrinkFactor*budget {
		t.Fatalf("output buffer of %d bytes after compaction, budget %d", got, budget)
	}
	if c.unwritten() != 2*len(cmd)-10 || string(c.out[c.outOff+len(cmd)-10:]) != string(cmd) {
		t.Fatal("compaction lost queued bytes")
	}
}

// TestLargeMaxInflightIsLazy: a huge FIFO costs memory only as it fills.
func TestLargeMaxInflightIsLazy(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := New(a, Options{MaxInflight: 1 << 24})
	runtime.ReadMemStats(&after)
	defer c.Close()
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Fatalf("a connection with MaxInflight 2^24 allocated %d bytes up front", got)
	}
	if c.Free() != 1<<24 {
		t.Fatalf("Free = %d", c.Free())
	}
}

// TestRingMemoryFollowsInflight: chunks are reused as the reader frees
// them, so sending many commands with few in flight does not accumulate
// chunks, and a peak of in-flight commands is served.
func TestRingMemoryFollowsInflight(t *testing.T) {
	var r ring
	r.init(1 << 20)
	start := r.chunks()
	push := func(n int) {
		for range n {
			t := r.tail.Load()
			e := r.writable(t)
			e.Kind = uint32(t)
			r.tail.Store(t + 1)
		}
		r.pub.Store(r.tail.Load())
	}
	pop := func(n int) {
		for range n {
			h := r.head.Load()
			if e := r.slot(h); e == nil || e.Kind != uint32(h) {
				t.Fatalf("entry %d lost", h)
			}
			r.head.Store(h + 1)
		}
	}
	for range 2000 { // 200k commands, 100 in flight at most
		push(100)
		pop(100)
	}
	if got := r.chunks(); got > start+1 {
		t.Fatalf("%d chunks after 200k commands with 100 in flight, started with %d", got, start)
	}
	push(100_000) // a peak
	if got := r.chunks(); got < 100_000/chunkLen {
		t.Fatalf("%d chunks hold 100k entries", got)
	}
	pop(100_000)
	for range 2000 {
		push(100)
		pop(100)
	}
}

// TestRingUnderConcurrency runs the FIFO's writer and reader on two
// goroutines with chunks moving between positions (run with -race).
func TestRingUnderConcurrency(t *testing.T) {
	var r ring
	// 16 positions, 11 chunks made up front, up to 12 chunks' worth in
	// flight: the writer makes a few more and then moves them around.
	r.init(12 * chunkLen)
	const total = 500_000
	var wg sync.WaitGroup
	wg.Add(1)
	errc := make(chan error, 1)
	go func() {
		defer wg.Done()
		for h := uint64(0); h < total; {
			if h == r.pub.Load() {
				runtime.Gosched()
				continue
			}
			if e := r.slot(h); e.Kind != uint32(h) || e.Written != int64(h) {
				errc <- errors.New("reader saw a wrong entry")
				return
			}
			h++
			r.head.Store(h)
		}
	}()
	for t := uint64(0); t < total; {
		if int(t-r.head.Load()) >= r.capacity() {
			runtime.Gosched()
			continue
		}
		e := r.writable(t)
		e.Kind, e.Written = uint32(t), int64(t)
		t++
		r.tail.Store(t)
		if t%7 == 0 || t == total {
			r.pub.Store(t)
		}
	}
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	if got := r.chunks(); got > 12+2 {
		t.Fatalf("%d chunks for 12 chunks' worth in flight", got)
	}
}

// dialWithin dials and fails the test if Dial does not return within
// hangLimit.
func dialWithin(t *testing.T, ctx context.Context, o Options) (*Conn, error) {
	t.Helper()
	type result struct {
		c   *Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := Dial(ctx, o)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-time.After(hangLimit):
		t.Fatalf("Dial did not return within %v", hangLimit)
		return nil, nil
	}
}

// TestDialReturnsWhenCancelledDuringHandshake: a server that accepts and
// never answers holds Dial only until ctx is cancelled, not for the dial
// timeout, with and without handshake steps.
func TestDialReturnsWhenCancelledDuringHandshake(t *testing.T) {
	srv := hostile.Start(t, hostile.Silent)
	for _, o := range []Options{
		{Addr: srv.Addr, DialTimeout: longDialTimout, Password: "pw"},
		{Addr: srv.Addr, DialTimeout: longDialTimout},
		{Addr: srv.Addr, DialTimeout: longDialTimout, RESP3: true, DB: 2},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		c, err := dialWithin(t, ctx, o)
		cancel()
		if err == nil {
			c.Close()
			t.Fatalf("%+v: Dial to a server that never answers succeeded", o)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%+v: err %v, want context.Canceled", o, err)
		}
	}
}

// TestDialTimeoutNamesTheStep: a handshake that gets no reply ends at the
// dial timeout with an error saying which step got none.
func TestDialTimeoutNamesTheStep(t *testing.T) {
	srv := hostile.Start(t, hostile.Silent)
	_, err := dialWithin(t, context.Background(), Options{Addr: srv.Addr, DialTimeout: 100 * time.Millisecond})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "PING") {
		t.Fatalf("err %v", err)
	}
}

// TestDialReturnsWhenCancelledDuringConnect: a connect that the server's
// full accept queue leaves unanswered ends when ctx is cancelled.
func TestDialReturnsWhenCancelledDuringConnect(t *testing.T) {
	addr := fullBacklog(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	defer cancel()
	c, err := dialWithin(t, ctx, Options{Addr: addr, DialTimeout: longDialTimout})
	if err == nil {
		c.Close()
		t.Skip("the kernel completed a connect beyond the accept queue")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestProbeSeesRefusals: without handshake steps, a connection counts as
// open only once the server answered a PING; a refusal fails the dial with
// the server's words, and a server that does not know PING still counts.
func TestProbeSeesRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    hostile.Behaviour
		want string // in the error; "" for success
	}{
		{"maxclients", hostile.MaxClients, "max number of clients reached"},
		{"accept then close", hostile.AcceptClose, "PING"},
		{"auth required", hostile.Answer("-NOAUTH Authentication required.\r\n"), "NOAUTH Authentication required"},
		{"escape codes", hostile.EscapeText, `\x1b[31mEVIL`},
		{"unknown command", hostile.Answer("-ERR unknown command 'PING', with args beginning with: \r\n"), ""},
		{"no permission", hostile.Answer("-NOPERM User default has no permissions to run the 'ping' command\r\n"), ""},
		{"healthy", hostile.OK, ""},
	} {
		srv := hostile.Start(t, tc.b)
		c, err := dialWithin(t, context.Background(), Options{Addr: srv.Addr})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && err == nil:
			c.Close()
		case err == nil:
			c.Close()
			t.Errorf("%s: Dial succeeded", tc.name)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: error %q does not say %q", tc.name, err, tc.want)
		case strings.ContainsAny(err.Error(), "\x1b\x07\r\n"):
			t.Errorf("%s: error %q carries control bytes", tc.name, err)
		}
	}
}

// TestSkipProbeSendsNothing: SkipProbe dials without a command.
func TestSkipProbeSendsNothing(t *testing.T) {
	srv := hostile.Start(t, hostile.Silent)
	c, err := dialWithin(t, context.Background(), Options{Addr: srv.Addr, SkipProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if srv.Commands() != 0 {
		t.Fatalf("the server read %d commands", srv.Commands())
	}
}

// TestProbeSeesRedisMaxclients: against a real Redis at its maxclients,
// a new connection fails with Redis's message.
func TestProbeSeesRedisMaxclients(t *testing.T) {
	srv := redistest.Start(t, "--maxclients", "1")
	first, err := Dial(context.Background(), Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = dialWithin(t, context.Background(), Options{Addr: srv.Addr})
	if err == nil || !strings.Contains(err.Error(), "max number of clients reached") {
		t.Fatalf("err %v", err)
	}
}

// TestDialErrorsRedactThePassword: a server that echoes the AUTH arguments
// in its error must not get the password into any error text.
func TestDialErrorsRedactThePassword(t *testing.T) {
	srv := hostile.Start(t, hostile.EchoAuthError)
	for _, o := range []Options{
		{Addr: srv.Addr, Password: "hunter2-secret"},
		{Addr: srv.Addr, User: "alice", Password: "hunter2-secret"},
		{Addr: srv.Addr, Password: "esc\x1bpw"},
	} {
		_, err := dialWithin(t, context.Background(), o)
		if err == nil {
			t.Fatalf("%q: AUTH refused but Dial succeeded", o.Password)
		}
		if !strings.Contains(err.Error(), "WRONGPASS") || !strings.Contains(err.Error(), "***") {
			t.Fatalf("error %q lost the server's words", err)
		}
		for e := error(err); e != nil; e = errors.Unwrap(e) {
			if s := e.Error(); strings.Contains(s, o.Password) || strings.Contains(s, quoted(o.Password)) ||
				strings.Contains(s, "esc\\x1bpw") {
				t.Fatalf("error %q carries the password", s)
			}
		}
	}
}

// TestDialErrorsRedactACutPassword: an echoed password that the 256-byte
// limit on error texts cuts is still masked.
func TestDialErrorsRedactACutPassword(t *testing.T) {
	srv := hostile.Start(t, hostile.Serve(func(args []string) string {
		return "-WRONGPASS " + strings.Repeat(".", 240) + " " + strings.Join(args[1:], " ") + "\r\n"
	}))
	pw := "correct-horse-battery-staple"
	_, err := dialWithin(t, context.Background(), Options{Addr: srv.Addr, Password: pw})
	if err == nil {
		t.Fatal("AUTH refused but Dial succeeded")
	}
	if !strings.HasSuffix(err.Error(), "***") || strings.Contains(err.Error(), pw[:5]) {
		t.Fatalf("error %q", err)
	}
}

// TestSanitizeProtocolErrors: a protocol error quoting the password is
// redacted and still matches ErrProtocol.
func TestSanitizeProtocolErrors(t *testing.T) {
	o := Options{Password: "pw\x01"}
	err := o.sanitize(protoErr("bad length %q", "$pw\x01"))
	if strings.Contains(err.Error(), `pw\x01`) || strings.Contains(err.Error(), "pw\x01") || !errors.Is(err, ErrProtocol) {
		t.Fatalf("err %q", err)
	}
}

// TestHandshakeSkipsPushes: a RESP3 push before the AUTH reply is not the
// reply; the refusal behind it fails the dial.
func TestHandshakeSkipsPushes(t *testing.T) {
	srv := hostile.Start(t, hostile.PushBeforeReply)
	c, err := dialWithin(t, context.Background(), Options{Addr: srv.Addr, Password: "pw"})
	if err == nil {
		c.Close()
		t.Fatal("AUTH was refused behind a push, but Dial succeeded")
	}
	if !strings.Contains(err.Error(), "failed: WRONGPASS") {
		t.Fatalf("err %v", err)
	}
}

// gate is a Handler that holds the reader in Reply until released, so a
// test can write more while replies wait in the reader's buffer.
type gate struct {
	mu      sync.Mutex
	entries []Entry
	ats     []int64
	got     chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{got: make(chan struct{}, 100), release: make(chan struct{}, 100)}
}

func (g *gate) Reply(e *Entry, r Reply, t Times) {
	g.mu.Lock()
	g.entries = append(g.entries, *e)
	g.ats = append(g.ats, t.Arrival)
	g.mu.Unlock()
	g.got <- struct{}{}
	<-g.release
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(hangLimit); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDoubledRepliesAreNotMatched: a server that answers twice gets its
// second replies counted as unsolicited, whether nothing is queued when
// they are read or the next request was written after they arrived.
func TestDoubledRepliesAreNotMatched(t *testing.T) {
	srv := hostile.Start(t, hostile.DoubleReply)
	c := mustDial(t, Options{Addr: srv.Addr, SkipProbe: true})
	defer c.Close()
	g := newGate()
	c.Start(g)
	cmd := AppendCommand(nil, "PING")
	send := func(kind uint32) {
		c.Queue(cmd, int64(kind), kind)
		if err := c.Flush(clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	const pairs = 3
	for k := range uint32(pairs) {
		send(2 * k)
		<-g.got
		// Both replies to 2k came in one read; the second waits in the
		// reader's buffer while 2k+1 is written after it arrived.
		send(2*k + 1)
		g.release <- struct{}{}
		<-g.got // the real reply to 2k+1; its double finds nothing queued
		g.release <- struct{}{}
	}
	const n = 2 * pairs
	waitFor(t, "all doubled replies", func() bool { return c.Unsolicited() == n })
	if c.Err() != nil {
		t.Fatalf("connection failed: %v", c.Err())
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, e := range g.entries {
		if e.Kind != uint32(i) || g.ats[i] < e.Written {
			t.Fatalf("reply %d matched to %+v at %d", i, e, g.ats[i])
		}
	}
}

// TestRefusedDialCostsNoFIFO: run -c 2000 against redis-server --maxclients
// 100 peaked at 413 MB (bench/bounds): every refused dial had built and
// touched its FIFO (352 KiB at the default MaxInflight) before the
// handshake failed, and 1900 slots redialed at once. A dial now builds the
// FIFO only once the server has answered. The FIFO up front is a page and
// a directory of MaxInflight/16 bytes: at MaxInflight 2^24 the directory
// alone (1 MiB) shows whether it was built.
func TestRefusedDialCostsNoFIFO(t *testing.T) {
	srv := hostile.Start(t, hostile.MaxClients)
	const dials = 20
	const inflight = 1 << 24
	alloc := testrun.Allocated(func() {
		for range dials {
			if _, err := Dial(context.Background(), Options{Addr: srv.Addr, MaxInflight: inflight}); err == nil || !strings.Contains(err.Error(), "max number of clients") {
				t.Fatalf("dial: %v, want the maxclients refusal", err)
			}
		}
	})
	fifo := int64(inflight/chunkLen)*int64(unsafe.Sizeof(atomic.Pointer[chunk]{})) + int64(preChunks)*int64(unsafe.Sizeof(chunk{}))
	per := int64(alloc) / dials
	t.Logf("%d bytes allocated per refused dial (a FIFO is %d)", per, fifo)
	if per >= fifo {
		t.Fatalf("a refused dial allocated %d bytes: its FIFO (%d) was built", per, fifo)
	}
	// A dial that succeeds has its FIFO.
	ok := hostile.Start(t, hostile.OK)
	c := mustDial(t, Options{Addr: ok.Addr})
	defer c.Close()
	if c.ring.dir == nil || c.ring.limit != DefaultMaxInflight {
		t.Fatal("a proven connection has no FIFO")
	}
}

// TestOutputBufferHoldsNoMoreThanTheBudget: against a server that never
// reads, the output buffer's capacity stops at the budget plus the command
// that crosses it. append's growth overshot it by a quarter, and with the
// collector's headroom run -d 100000 reached 270 MB resident
// (bench/bounds neverread-d100000).
func TestOutputBufferHoldsNoMoreThanTheBudget(t *testing.T) {
	srv := hostile.Start(t, hostile.NeverRead)
	for _, budget := range []int{64 << 10, DefaultMaxBuffer} {
		c, err := Dial(context.Background(), Options{Addr: srv.Addr, MaxBuffer: budget, SkipProbe: true})
		if err != nil {
			t.Fatal(err)
		}
		cmd := bigCommand(100_000 - 40)
		for queued := 0; queued < 4000 && c.Free() > 0; queued++ {
			c.Queue(cmd, 0, 0)
			if err := c.Flush(clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if c.Free() != 0 {
			t.Fatalf("budget %d: the server took everything", budget)
		}
		if got, most := cap(c.out), budget+len(cmd); got > most {
			t.Errorf("budget %d: output buffer of %d bytes, want at most %d (budget and one command)", budget, got, most)
		}
		c.Close()
	}
}

// TestOutputBufferBoundUnderPartialWrites: whatever the socket takes between
// commands, the output buffer's capacity stays within the budget and one
// command. A buffer whose written prefix was not yet compacted away used to
// grow to hold it too (1.4 MB for a 1 MB budget in a CI run).
func TestOutputBufferBoundUnderPartialWrites(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	const budget = 64 << 10
	c := New(a, Options{MaxBuffer: budget, MaxInflight: 1 << 20})
	defer c.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	cmds := make([][]byte, 64)
	for i := range cmds {
		cmds[i] = bigCommand(i * 100)
	}
	most := budget + len(cmds[len(cmds)-1])
	for step := range 100_000 {
		if c.Free() > 0 {
			c.Queue(cmds[rng.IntN(len(cmds))], 0, 0)
		}
		if got := cap(c.out); got > most {
			t.Fatalf("step %d: output buffer of %d bytes, want at most %d (budget and one command)", step, got, most)
		}
		if w := c.unwritten(); w > 0 && rng.IntN(3) == 0 {
			c.advance(rng.IntN(w)+1, 1)
		}
		for c.InFlight() > 0 && c.ring.head.Load() < c.ring.pub.Load() {
			c.ring.head.Add(1) // answered
		}
	}
}
