package conn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
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
// the clock reading taken when the reply's last byte was read. e is valid
// only during the call.
type Handler interface {
	Reply(e *Entry, r Reply, at int64)
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
	// DialTimeout bounds connecting and the handshake. Default 5s.
	DialTimeout time.Duration
	// MaxInflight caps the commands queued or awaiting a reply on the
	// connection (the FIFO's capacity). Default DefaultMaxInflight.
	MaxInflight int
	// Now is the clock used to timestamp replies (monotonic ns). Required
	// when replies are timed.
	Now func() int64
	// MaxBuffer caps the bytes queued on the connection and not yet
	// written: Free reports no room while they reach it (a command is
	// always accepted into an empty buffer). Default DefaultMaxBuffer.
	MaxBuffer int
}

// DefaultMaxBuffer is the default cap on a connection's unwritten bytes.
const DefaultMaxBuffer = 4 << 20

// DefaultMaxInflight is the default FIFO capacity of a connection. An entry
// takes 32 bytes, so the default costs 320 KB per connection.
const DefaultMaxInflight = 10000

// Errors a connection can end with.
var (
	ErrUnsolicited = errors.New("reply received for no request")
	ErrClosed      = errors.New("connection closed")
	// ErrTimeout ends a connection whose oldest request waited longer than
	// the caller's timeout (see Expire).
	ErrTimeout = errors.New("request timed out")
)

func (o Options) withDefaults() Options {
	if o.Network == "" {
		o.Network = "tcp"
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = DefaultMaxInflight
	}
	if o.Now == nil {
		o.Now = func() int64 { return 0 }
	}
	return o
}

// Conn is a pipelined RESP connection. One goroutine (the writer) calls
// Queue and Flush; the connection's own reader goroutine consumes replies.
type Conn struct {
	nc   net.Conn
	raw  *rawWriter // nil when the transport has no file descriptor
	rd   *Reader
	ring ring
	h    Handler

	// Writer-owned output buffer: out[outOff:] is queued but not written.
	out     []byte
	outOff  int
	queued  uint64 // bytes queued since the start
	flushed uint64 // bytes written since the start

	done    chan struct{}
	started bool
	closing atomic.Bool
	dead    atomic.Bool
	errMu   sync.Mutex
	err     error

	// unsolicited counts replies that answered no request.
	unsolicited atomic.Uint64
}

// Unsolicited returns how many replies arrived that answered no request
// (they are never matched to one). Safe from any goroutine.
func (c *Conn) Unsolicited() uint64 { return c.unsolicited.Load() }

// Dial connects and runs the handshake (AUTH, HELLO 3, SELECT). The reader
// goroutine starts with Start.
func Dial(ctx context.Context, o Options) (*Conn, error) {
	o = o.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, err
	}
	c := newConn(nc, o)
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if err := c.handshake(o); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return c, nil
}

// New wraps an established transport (a net.Pipe in tests) without a
// handshake.
func New(nc net.Conn, o Options) *Conn {
	return newConn(nc, o.withDefaults())
}

func newConn(nc net.Conn, o Options) *Conn {
	c := &Conn{nc: nc, rd: NewReader(nc, o.Now), done: make(chan struct{})}
	c.ring.init(o.MaxInflight)
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = newRawWriter(raw)
		}
	}
	return c
}

func (c *Conn) handshake(o Options) error {
	type step struct {
		name string
		args []string
	}
	var steps []step
	if o.Password != "" {
		if o.User != "" {
			steps = append(steps, step{"AUTH", []string{"AUTH", o.User, o.Password}})
		} else {
			steps = append(steps, step{"AUTH", []string{"AUTH", o.Password}})
		}
	}
	if o.RESP3 {
		steps = append(steps, step{"HELLO 3", []string{"HELLO", "3"}})
	}
	if o.ClientTracking {
		steps = append(steps, step{"CLIENT TRACKING", []string{"CLIENT", "TRACKING", "on"}})
	}
	if o.DB != 0 {
		steps = append(steps, step{"SELECT", []string{"SELECT", strconv.Itoa(o.DB)}})
	}
	if len(steps) == 0 {
		return nil
	}
	var buf []byte
	for _, s := range steps {
		buf = AppendCommand(buf, s.args...)
	}
	if _, err := c.nc.Write(buf); err != nil {
		return err
	}
	for _, s := range steps {
		r, err := c.rd.Next()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if r.Err {
			return fmt.Errorf("%s failed: %s", s.name, c.rd.ErrorText)
		}
	}
	return nil
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
	for {
		r, err := c.rd.Next()
		if err != nil {
			c.fail(err)
			return
		}
		if r.Push {
			continue
		}
		head := c.ring.head.Load()
		// The writer publishes entries right after its write returns; a
		// fast reply can overtake that by a few instructions.
		for spins := 0; head == c.ring.pub.Load(); spins++ {
			if head == c.ring.tail.Load() {
				c.fail(ErrUnsolicited)
				return
			}
			if c.closing.Load() || c.dead.Load() {
				return
			}
			if spins < 100 {
				runtime.Gosched()
			} else {
				time.Sleep(50 * time.Microsecond)
			}
		}
		if r.Err {
			r.Text = c.rd.ErrorText
		}
		c.h.Reply(c.ring.slot(head), r, c.rd.At())
		c.ring.head.Store(head + 1)
	}
}

// fail records the first error, marks the connection dead and closes the
// socket so both sides stop. An error after Close is not a failure.
func (c *Conn) fail(err error) {
	c.errMu.Lock()
	if c.err == nil && !c.closing.Load() {
		c.err = err
	}
	c.errMu.Unlock()
	c.dead.Store(true)
	c.nc.Close()
}

// Err returns why the connection failed, or nil if it is alive or was
// closed with Close.
func (c *Conn) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Dead reports whether the connection has failed or been closed.
func (c *Conn) Dead() bool { return c.dead.Load() }

// Free returns how many more commands may be queued now.
func (c *Conn) Free() int {
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
	h, p := c.ring.head.Load(), c.ring.pub.Load()
	if h >= p {
		return 0, false
	}
	return atomic.LoadInt64(&c.ring.slot(h).Intended), true
}

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

// Expire ends the connection because a request timed out: Err becomes
// ErrTimeout, so the unanswered requests count as timeouts.
func (c *Conn) Expire() { c.fail(ErrTimeout) }

// Pending reports whether queued bytes wait to be written.
func (c *Conn) Pending() bool { return c.flushed < c.queued }

// Queue appends one encoded command to the output buffer and reserves its
// FIFO entry. The caller must have checked Free() > 0. Nothing is written
// until Flush.
func (c *Conn) Queue(cmd []byte, intended int64, kind uint32) {
	if c.outOff > 0 && c.outOff >= len(c.out)/2 {
		c.out = c.out[:copy(c.out, c.out[c.outOff:])]
		c.outOff = 0
	}
	c.out = append(c.out, cmd...)
	c.queued += uint64(len(cmd))
	t := c.ring.tail.Load()
	e := c.ring.slot(t)
	atomic.StoreInt64(&e.Intended, intended) // OldestPending reads it from another goroutine
	e.Written, e.Kind, e.end = 0, kind, c.queued
	c.ring.tail.Store(t + 1)
}

// Flush makes one non-blocking attempt to write the queued bytes. Commands
// whose last byte went out are stamped with now as their write time and
// become visible to the reader. A full socket buffer is not an error: the
// rest stays queued for the next Flush. Without a file descriptor the write
// blocks.
func (c *Conn) Flush(now int64) error {
	if c.flushed == c.queued {
		return nil
	}
	if c.dead.Load() {
		return c.deadErr()
	}
	n, err := c.writeSome(c.out[c.outOff:])
	c.advance(n, now)
	if err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// FlushBlocking writes all queued bytes, waiting for the socket as needed.
func (c *Conn) FlushBlocking(now int64) error {
	if c.flushed == c.queued {
		return nil
	}
	if c.dead.Load() {
		return c.deadErr()
	}
	n, err := c.nc.Write(c.out[c.outOff:])
	c.advance(n, now)
	if err != nil {
		c.fail(err)
		return err
	}
	return nil
}

func (c *Conn) deadErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// advance accounts for n more bytes written at now and publishes the
// commands they complete.
func (c *Conn) advance(n int, now int64) {
	if n <= 0 {
		return
	}
	c.flushed += uint64(n)
	c.outOff += n
	if c.outOff == len(c.out) {
		c.out, c.outOff = c.out[:0], 0
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

// Close closes the connection and waits for its reader goroutine. It is
// idempotent. After Close, Unanswered and Unwritten describe what was left.
func (c *Conn) Close() {
	c.closing.Store(true)
	c.dead.Store(true)
	c.nc.Close()
	if c.started {
		<-c.done
	}
}

// Write writes b completely, blocking as needed. For callers that drive
// the connection synchronously (no reader goroutine, no FIFO).
func (c *Conn) Write(b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// ReadReply reads and skips the next reply, returning it and the clock
// reading taken when its last byte arrived. Only for connections without a
// reader goroutine (Start not called).
func (c *Conn) ReadReply() (Reply, int64, error) {
	r, err := c.rd.Next()
	if err != nil {
		c.fail(err)
		return r, 0, err
	}
	return r, c.rd.At(), nil
}

// ErrorText returns the text of the last error reply read synchronously.
// The slice is reused.
func (c *Conn) ErrorText() []byte { return c.rd.ErrorText }

// Done is closed when the reader goroutine has exited.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Unanswered calls fn for every command that was written but not answered.
// Call it only after Close.
func (c *Conn) Unanswered(fn func(e *Entry)) {
	for i, end := c.ring.head.Load(), c.ring.pub.Load(); i < end; i++ {
		fn(c.ring.slot(i))
	}
}

// Unsent calls fn for every command queued but never fully written. Call
// it only after Close.
func (c *Conn) Unsent(fn func(e *Entry)) {
	for i, end := c.ring.pub.Load(), c.ring.tail.Load(); i < end; i++ {
		fn(c.ring.slot(i))
	}
}

// Unwritten returns the commands queued but never fully written. Call it
// only after Close.
func (c *Conn) Unwritten() int { return int(c.ring.tail.Load() - c.ring.pub.Load()) }

// ring is a single-producer single-consumer FIFO of entries:
//
//	head ≤ pub ≤ tail
//	[head, pub)  written, awaiting replies (the reader's side)
//	[pub, tail)  queued, not yet fully written (the writer's side)
type ring struct {
	slots []Entry
	mask  uint64
	limit int
	head  atomic.Uint64
	_     [56]byte // keep the reader's index off the writer's cache line
	pub   atomic.Uint64
	tail  atomic.Uint64
}

func (r *ring) init(limit int) {
	size := 1
	for size < limit {
		size <<= 1
	}
	r.slots = make([]Entry, size)
	// Touch every page now: a page fault on first use would otherwise land
	// in the middle of a measured run.
	for i := 0; i < size; i += 4096 / int(unsafe.Sizeof(Entry{})) {
		r.slots[i].end = 0
	}
	r.mask = uint64(size - 1)
	r.limit = limit
}

func (r *ring) capacity() int        { return r.limit }
func (r *ring) slot(i uint64) *Entry { return &r.slots[i&r.mask] }
