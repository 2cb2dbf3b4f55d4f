package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/rxstamp"
)

// Entry is one command on a connection, from the moment it is queued until
// its reply arrives. Entries live in the connection's FIFO in send order.
type Entry struct {
	// Intended is when the timeline wanted the command sent (clock ns).
	Intended int64
	// Written is when the write that carried the command's last byte began.
	Written int64
	// Kind is the caller's tag, e.g. which command of a mix this is.
	Kind uint32
	end  uint64 // output-stream offset just past the command's last byte
}

// Handler receives replies. Reply is called from the connection's reader
// goroutine, once per reply, in send order, with the entry it answers and
// the reply's instants: t.Read is the clock reading taken when the reply's
// last byte was read, t.Arrival when the kernel received it (see Times);
// neither is earlier than e.Written, and t.Arrival ≤ t.Read. e is valid
// only during the call. Replies that answer no request never reach the
// Handler: see Conn.Unsolicited.
type Handler interface {
	Reply(e *Entry, r Reply, t Times)
}

// A ReadEnder is a Handler that keeps a per-read figure pending across
// the replies of one read (see Times.Last). ReadEnded is called on the
// reader goroutine before the reader waits on the socket with replies
// handled since the last Times.Last (its buffer ended inside a reply), and
// when the reader exits: nothing stays pending while the reader waits.
type ReadEnder interface {
	ReadEnded()
}

// Options configure a connection.
type Options struct {
	// Network is "tcp" or "unix".
	Network string
	// Addr is host:port, or a socket path for "unix".
	Addr string
	// User and Password authenticate with AUTH (User may be empty).
	User, Password string
	// DB is selected with SELECT when not 0.
	DB int
	// RESP3 switches the connection to RESP3 with HELLO 3.
	RESP3 bool
	// ClientTracking sends CLIENT TRACKING on (redis-benchmark's
	// --enable-tracking); invalidation pushes are skipped by the reader.
	ClientTracking bool
	// ReadOnly sends READONLY: a Redis Cluster replica then serves reads
	// of its primary's slots instead of redirecting them (-MOVED).
	ReadOnly bool
	// SkipProbe dials without checking that the server answers when the
	// handshake has no step (no AUTH, HELLO, CLIENT TRACKING or SELECT).
	// By default such a connection sends PING and counts as open only once
	// a reply arrives, so a server that accepts and then refuses or closes
	// (Redis beyond maxclients) fails the dial with its own words. For
	// callers that must not send extra commands.
	SkipProbe bool
	// DialTimeout bounds connecting and the handshake. Default
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// MaxInflight caps the commands queued or awaiting a reply on the
	// connection (the FIFO's capacity). Default DefaultMaxInflight.
	MaxInflight int
	// Now is the clock used to timestamp replies (monotonic ns). Default
	// the monotonic clock of package internal/clock, the clock the
	// scheduler stamps writes with.
	Now func() int64
	// MaxBuffer caps the bytes queued on the connection and not yet
	// written: Free reports no room while they reach it (a command is
	// always accepted into an empty buffer). Default DefaultMaxBuffer.
	MaxBuffer int
	// TLS, when set, runs TLS over the transport before the handshake's
	// first command (a failure wraps ErrTLS). It is shared by every
	// connection dialed with these options and must not change after.
	TLS *tls.Config
	// FixedServerName says TLS.ServerName was named for the whole
	// deployment (--sni) rather than taken from Addr's host: ForAddr keeps
	// it for the other servers.
	FixedServerName bool
	// OnTLSHandshake, when set, is called with every TLS connection's
	// session once its dial has succeeded; concurrently from the dialing
	// goroutines (DialSome dials several at once).
	OnTLSHandshake func(TLSInfo)
	// ReceiveClock is where a reply's arrival comes from: "" or
	// ReceiveKernel, the kernel's receive timestamp where the socket gives
	// one, else the read instant; ReceiveRead, always the read instant
	// (the behaviour before kernel timestamps, for comparison).
	ReceiveClock string
}

// DefaultMaxBuffer is the default cap on a connection's unwritten bytes:
// some thousands of typical pipelined commands, and enough for a single
// command with a value of up to about 1 MB. Against a server that stops
// reading, the default 50 connections hold 50 MiB unsent, which the
// collector's headroom doubles: at 2 MiB, run -d 100000 took 270 MB
// resident (bench/bounds neverread-d100000), above the 256 MB that a run
// with default flags may take.
const DefaultMaxBuffer = 1 << 20

// DefaultMaxInflight is the default FIFO capacity of a connection. An entry
// takes 32 bytes: the FIFO starts at a page and grows with the commands in
// flight, so the default costs up to about 320 KB per connection, only
// when that many are in flight.
const DefaultMaxInflight = 10000

// DefaultDialTimeout bounds connecting and the handshake when
// Options.DialTimeout is not set.
const DefaultDialTimeout = 5 * time.Second

// Errors a connection can end with.
var (
	ErrClosed = errors.New("connection closed")
	// ErrTimeout ends a connection whose oldest request waited longer than
	// the caller's timeout (see Expire).
	ErrTimeout = errors.New("request timed out")
)

func (o Options) withDefaults() Options {
	if o.Network == "" {
		o.Network = "tcp"
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = DefaultMaxInflight
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = DefaultMaxBuffer
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	return o
}

// The reader waits for the writer to publish an entry whose reply has
// already arrived (the writer publishes right after its write returns, a
// fast reply can overtake that by a few instructions): first by yielding,
// then, should the writer have been descheduled, by short sleeps.
const (
	publishSpins = 100
	publishSleep = 50 * time.Microsecond
)

// shrinkFactor: an emptied output buffer whose capacity exceeds
// shrinkFactor × MaxBuffer is released. Within the budget the buffer never
// holds more than MaxBuffer and one command (grow), so only a burst queued
// past Free reaches this and the steady state never reallocates.
const shrinkFactor = 8

// An output buffer grows by doubling as commands need it (up to
// MaxBuffer and the command that crosses it); every shrinkFlushes flushes
// that emptied it, a buffer past outMin whose fullest flush in that span
// held at most an eighth of it halves, so a burst's memory goes back. The
// eighth, against the doubling at need, leaves a load whose flushes vary
// less than fourfold with one buffer: the steady state does not
// reallocate.
const (
	outMin        = 4 << 10
	shrinkFlushes = 1024
)

// Conn is a pipelined RESP connection. One goroutine (the writer) calls
// Queue and Flush; the connection's own reader goroutine consumes replies.
type Conn struct {
	nc  net.Conn   // the transport (the socket, under TLS too)
	raw *rawWriter // nil when the transport has no file descriptor
	// stamps reads the socket with kernel receive timestamps; nil when
	// they are off or the socket has none. Under TLS it is what the
	// tls.Conn reads from.
	stamps *rxstamp.Reader
	tls    *tlsLink // nil for a plain connection
	rd     *Reader
	ring   ring
	h      Handler

	// Writer-owned output buffer: out[outOff:] is queued but not written.
	out       []byte
	outOff    int
	queued    uint64 // bytes queued since the start
	flushed   uint64 // bytes written since the start
	maxBuffer uint64
	// outPeak is the most unwritten bytes a flush met, and flushes the
	// flushes that emptied the buffer, since the last shrink check.
	outPeak int
	flushes int

	done    chan struct{}
	started bool
	// member is the connection's membership of a hub that reads it
	// (StartOn, Hub.Join), nil when none does.
	member  atomic.Pointer[member]
	closing atomic.Bool
	dead    atomic.Bool
	// writeFailed: a write failed while the reader ran; the socket stays
	// open until the reader has read what arrived (failWrite).
	writeFailed atomic.Bool
	drainLimit  *time.Timer // closes the socket if the reader does not end
	errMu       sync.Mutex
	err         error

	// unsolicited counts replies that answered no request.
	unsolicited atomic.Uint64
	// bytesOut counts the bytes written (Flush or Write), for observers on
	// other goroutines.
	bytesOut atomic.Uint64
}

// Unsolicited returns how many replies arrived that answered no request:
// read when no request was queued, or read before the request they would
// answer was written. They are skipped, never matched to a request. Safe
// from any goroutine.
func (c *Conn) Unsolicited() uint64 { return c.unsolicited.Load() }

// BytesWritten returns the bytes of commands written to the socket so far
// (the handshake's aside). Safe from any goroutine.
func (c *Conn) BytesWritten() uint64 { return c.bytesOut.Load() }

// BytesRead returns the bytes read from the socket so far, the handshake's
// replies included. Safe from any goroutine.
func (c *Conn) BytesRead() uint64 { return c.rd.BytesRead() }

// Dial connects, runs the TLS handshake when o.TLS is set, then the
// handshake (AUTH, HELLO 3, CLIENT TRACKING, SELECT), or, when there is
// none, probes the server with PING unless o.SkipProbe. It returns as soon
// as ctx is done, whatever the phase. The reader goroutine starts with
// Start.
//
// Error texts never contain o.Password, and text from the server has its
// control bytes escaped.
func Dial(ctx context.Context, o Options) (*Conn, error) {
	o = o.withDefaults()
	if err := checkReceiveClock(o.ReceiveClock); err != nil {
		return nil, err
	}
	c, err := dial(ctx, o)
	if err != nil {
		return nil, o.sanitize(err)
	}
	return c, nil
}

func dial(parent context.Context, o Options) (*Conn, error) {
	ctx, cancel := context.WithTimeout(parent, o.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, err
	}
	// Closing the socket is what interrupts a handshake blocked in a read
	// or a write, whether ctx was cancelled or timed out.
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	c := newUnproven(nc, o)
	if o.TLS != nil {
		err = c.startTLS(ctx, o)
	}
	if err == nil {
		err = c.handshake(ctx, o)
	}
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	c.ring.init(o.MaxInflight)
	if c.tls != nil && o.OnTLSHandshake != nil {
		o.OnTLSHandshake(c.tls.info)
	}
	return c, nil
}

// New wraps an established transport (a net.Pipe in tests) without a
// handshake. An unknown o.ReceiveClock counts as "".
func New(nc net.Conn, o Options) *Conn {
	return newConn(nc, o.withDefaults())
}

func newConn(nc net.Conn, o Options) *Conn {
	c := newUnproven(nc, o)
	c.ring.init(o.MaxInflight)
	return c
}

// newUnproven is a Conn without its FIFO, enough for the handshake. The
// FIFO (352 KiB touched up front at the default MaxInflight) is made once
// the server has answered: a storm of refused dials (-c 2000 against
// maxclients 100) then costs their read buffers only.
func newUnproven(nc net.Conn, o Options) *Conn {
	c := &Conn{nc: nc, done: make(chan struct{}), maxBuffer: uint64(o.MaxBuffer)}
	c.rd, c.stamps = stampedReader(nc, o)
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = newRawWriter(raw)
		}
	}
	return c
}

// Start starts the reader goroutine, which calls h for every reply until
// the connection ends.
func (c *Conn) Start(h Handler) {
	c.h = h
	c.started = true
	go c.readLoop()
}

func (c *Conn) readLoop() {
	defer close(c.done)
	if re, ok := c.h.(ReadEnder); ok {
		c.rd.beforeFill = re.ReadEnded
		defer re.ReadEnded()
	}
	for {
		r, err := c.rd.Next()
		if err != nil {
			c.fail(err)
			return
		}
		if !c.dispatch(r) {
			return
		}
	}
}

// dispatch matches reply r to the oldest request written and hands both
// to the handler; false when the connection closed while the reply waited
// for its request's write to be published.
func (c *Conn) dispatch(r Reply) bool {
	if r.Push {
		return true
	}
	head := c.ring.head.Load()
	unasked := false
	for spins := 0; head == c.ring.pub.Load(); spins++ {
		if head == c.ring.tail.Load() {
			unasked = true // nothing queued: it answers no request
			break
		}
		if c.closing.Load() || c.dead.Load() {
			return false
		}
		if spins < publishSpins {
			runtime.Gosched()
		} else {
			time.Sleep(publishSleep)
		}
	}
	// A reply read before its would-be request was written cannot
	// answer it: Written is stamped before the write begins, so a
	// genuine reply is always read after. Matching an unasked reply
	// would pair every later reply with the wrong request; it is
	// counted and skipped, and the request waits for its own.
	if unasked {
		c.unsolicited.Add(1)
		return true
	}
	e, t := c.ring.slot(head), c.rd.Times()
	// A clock that reads 0 is broken, not early: the handler counts
	// such readings as clock errors and fails the run. The rule holds
	// on the read instant, which a reply's kernel arrival never
	// passes.
	if t.Read > 0 && t.Read < e.Written {
		c.unsolicited.Add(1)
		return true
	}
	t = t.After(e.Written)
	t.Last = c.rd.Buffered() == 0
	if r.Err {
		r.Text = c.rd.ErrorText
	}
	c.h.Reply(e, r, t)
	c.ring.head.Store(head + 1)
	return true
}

// Free returns how many more commands may be queued now: none while the
// unwritten bytes reach MaxBuffer, otherwise the FIFO's room. An empty
// output buffer takes a command of any size. Only the writer may call it.
func (c *Conn) Free() int {
	if c.queued-c.flushed >= c.maxBuffer {
		return 0
	}
	return c.ring.capacity() - int(c.ring.tail.Load()-c.ring.head.Load())
}

// InFlight returns the commands queued or awaiting a reply.
func (c *Conn) InFlight() int { return int(c.ring.tail.Load() - c.ring.head.Load()) }

// Written returns the commands fully written so far.
func (c *Conn) Written() uint64 { return c.ring.pub.Load() }

// OldestPending returns the intended time of the oldest command written and
// not yet answered, for progress reports; ok is false when there is none.
// Safe to call from any goroutine.
func (c *Conn) OldestPending() (intended int64, ok bool) {
	// The reader may answer the entry and the writer reuse its slot while
	// it is read: a few tries get a consistent reading, and a progress
	// report can do without one.
	for range oldestTries {
		h, p := c.ring.head.Load(), c.ring.pub.Load()
		if h >= p {
			return 0, false
		}
		e := c.ring.slot(h)
		if e == nil { // answered meanwhile, its chunk moved on
			continue
		}
		intended = atomic.LoadInt64(&e.Intended)
		if c.ring.head.Load() == h { // not answered meanwhile: e was h's
			return intended, true
		}
	}
	return 0, false
}

// oldestTries bounds OldestPending's attempts at a consistent reading.
const oldestTries = 4

// OldestWritten returns the write time of the oldest command written and
// not yet answered. Only the writer goroutine may call it (it alone writes
// the entries).
func (c *Conn) OldestWritten() (written int64, ok bool) {
	h, p := c.ring.head.Load(), c.ring.pub.Load()
	if h >= p {
		return 0, false
	}
	return c.ring.slot(h).Written, true
}

// Pending reports whether queued bytes wait to be written.
func (c *Conn) Pending() bool { return c.flushed < c.queued }

// Queue appends one encoded command to the output buffer and reserves its
// FIFO entry. The caller must have checked Free() > 0. Nothing is written
// until Flush.
func (c *Conn) Queue(cmd []byte, intended int64, kind uint32) {
	if c.outOff > 0 && c.outOff >= len(c.out)/2 {
		c.compact(len(cmd))
	}
	if len(c.out)+len(cmd) > cap(c.out) {
		c.grow(len(cmd))
	}
	c.out = append(c.out, cmd...)
	c.queued += uint64(len(cmd))
	t := c.ring.tail.Load()
	e := c.ring.writable(t)
	atomic.StoreInt64(&e.Intended, intended) // OldestPending reads it from another goroutine
	e.Written, e.Kind, e.end = 0, kind, c.queued
	c.ring.tail.Store(t + 1)
}

// grow makes room for a command of cmdLen bytes in the output buffer. It
// doubles, as append would, but never past what the budget lets the buffer
// hold: MaxBuffer and the command that crosses it. append's own growth
// overshot that by a quarter, and a buffer that grew to keep its written
// prefix too reached 1.4 × MaxBuffer, in every connection a server no
// longer reads. Only the unwritten bytes move; at the limit they move to
// the front of the buffer instead.
func (c *Conn) grow(cmdLen int) {
	rest := len(c.out) - c.outOff
	need, limit := rest+cmdLen, int(c.maxBuffer)+cmdLen
	if need <= cap(c.out) && (cap(c.out) >= limit || c.outOff >= cap(c.out)/4) {
		c.compact(cmdLen)
		return
	}
	size := max(need, min(2*cap(c.out), limit))
	if need > limit { // a burst queued past Free: grow as append would
		size = max(need, 2*cap(c.out))
	}
	nb := make([]byte, rest, size)
	copy(nb, c.out[c.outOff:])
	c.out, c.outOff = nb, 0
}

// compact moves the unwritten bytes to the front of the output buffer, into
// one of the budget's size when the buffer grew far beyond MaxBuffer (a burst
// queued past Free) and they fit the budget.
func (c *Conn) compact(cmdLen int) {
	rest := c.out[c.outOff:]
	if uint64(cap(c.out)) > shrinkFactor*c.maxBuffer && uint64(len(rest)) < c.maxBuffer {
		c.out = append(make([]byte, 0, int(c.maxBuffer)+cmdLen), rest...)
	} else {
		c.out = c.out[:copy(c.out, rest)]
	}
	c.outOff = 0
}

// Flush makes one non-blocking attempt to write the queued bytes. Commands
// whose last byte went out are stamped with now as their write time and
// become visible to the reader. A full socket buffer is not an error: the
// rest stays queued for the next Flush. Without a file descriptor the write
// blocks.
//
// now must be read before the call, on the clock of Options.Now: the reader
// takes a reply read earlier than its request's write time for one the
// server sent unasked.
func (c *Conn) Flush(now int64) error { return c.flush(now, false) }

// FlushBlocking writes all queued bytes, waiting for the socket as needed;
// like Flush it stamps and publishes the commands written and releases a
// buffer that a burst grew far beyond MaxBuffer.
func (c *Conn) FlushBlocking(now int64) error { return c.flush(now, true) }

// flush is Flush, or FlushBlocking with all: they differ only in the
// write.
func (c *Conn) flush(now int64, all bool) error {
	if c.flushed == c.queued {
		return nil
	}
	if c.dead.Load() {
		return c.deadErr()
	}
	var n int
	var err error
	if all {
		n, err = c.writeAll(c.out[c.outOff:])
	} else {
		n, err = c.writeSome(c.out[c.outOff:])
	}
	c.advance(n, now)
	if err != nil {
		c.failWrite(err)
		return err
	}
	return nil
}

// advance accounts for n more bytes written at now and publishes the
// commands they complete.
func (c *Conn) advance(n int, now int64) {
	if n <= 0 {
		return
	}
	c.flushed += uint64(n)
	c.bytesOut.Add(uint64(n))
	c.outOff += n
	c.outPeak = max(c.outPeak, len(c.out)-c.outOff+n)
	if c.outOff == len(c.out) {
		c.out, c.outOff = c.out[:0], 0
		c.flushes++
		switch {
		case uint64(cap(c.out)) > shrinkFactor*c.maxBuffer:
			c.out = nil // a burst queued past Free: give its memory back
		case c.flushes >= shrinkFlushes:
			// A buffer a burst grew and that the last flushes used an
			// eighth of at most halves.
			if cap(c.out) > outMin && c.outPeak <= cap(c.out)/8 {
				c.out = make([]byte, 0, cap(c.out)/2)
			}
			c.flushes, c.outPeak = 0, 0
		}
	}
	p, tail := c.ring.pub.Load(), c.ring.tail.Load()
	for p < tail {
		e := c.ring.slot(p)
		if e.end > c.flushed {
			break
		}
		e.Written = now
		p++
	}
	c.ring.pub.Store(p)
}

// Write writes b completely, blocking as needed. For callers that drive
// the connection synchronously (no reader goroutine, no FIFO).
func (c *Conn) Write(b []byte) error {
	n, err := c.writeRaw(b)
	c.bytesOut.Add(uint64(n))
	if err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// ReadReply reads and skips the next reply, returning it and its instants
// (see Times). Only for connections without a reader goroutine (Start not
// called). It returns every reply, pushes included; ReadReplyAfter applies
// the reader goroutine's rules.
func (c *Conn) ReadReply() (Reply, Times, error) {
	r, err := c.rd.Next()
	if err != nil {
		c.fail(err)
		return r, Times{}, err
	}
	return r, c.rd.Times(), nil
}

// ReadReplyAfter is ReadReply for a caller that began writing its request
// at written (a clock reading taken before the write, on the clock of
// Options.Now): it skips RESP3 pushes, and replies read before written,
// which cannot answer the request (the server sent them unasked, or twice);
// those count in Unsolicited (on the read instant); the arrival returned
// is never earlier than written. Replies the server sends unasked after the
// write began cannot be told from the real ones.
func (c *Conn) ReadReplyAfter(written int64) (Reply, Times, error) {
	for {
		r, t, err := c.ReadReply()
		switch {
		case err != nil:
			return r, t, err
		case r.Push:
			continue
		case t.Read < written:
			c.unsolicited.Add(1)
			continue
		}
		return r, t.After(written), nil
	}
}

// ErrorText returns the text of the last error reply read synchronously.
// The slice is reused.
func (c *Conn) ErrorText() []byte { return c.rd.ErrorText }
