// Package sink is a RESP server for tests and measurement programs that
// timestamps what it reads and writes: the referee of latency truth. For
// every command it keeps which connection sent it, its arguments, when the
// read that completed it returned (and that read's kernel receive
// timestamp), and when the write carrying its reply began. For a command a
// client intended to send at I, the server-side truth is Replied − I: a
// client that reports less has lost time (coordinated omission), one that
// reports much more has added its own.
//
// It answers every command at once from a small table (+PONG, $-1 for
// GET, :1 for INCR, +OK for what it does not know), serves pipelines (all
// the commands of one read are answered in one write), and can be told to
// stall: stop reading and hold replies for a while. It listens on
// 127.0.0.1 only.
package sink

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/rxstamp"
)

// DefaultMaxRecords is the record cap when Options.MaxRecords is not set.
const DefaultMaxRecords = 1 << 20

// Options configure a Sink.
type Options struct {
	// MaxRecords bounds the records kept over all connections; commands
	// past it are still answered, and counted by Dropped. Default
	// DefaultMaxRecords.
	MaxRecords int
}

// Record is one command the sink read and answered. Instants are on the
// monotonic clock of package internal/clock (clock.Now).
type Record struct {
	// Conn is the connection, numbered from 0 in accept order.
	Conn int
	// Argv is the command's arguments; the sink's memory, not to change.
	Argv [][]byte
	// Read is the clock reading right after the read that completed the
	// command returned.
	Read int64
	// Kernel is that read's kernel receive timestamp (when the command's
	// last bytes reached the sink's kernel), converted to the same clock;
	// 0 where the socket gave none.
	Kernel int64
	// Replied is the clock reading just before the write that carried the
	// command's reply: every command of one read shares it.
	Replied int64
}

// Sink is a running timestamping RESP server.
type Sink struct {
	ln         net.Listener
	maxRecords int64
	kept       atomic.Int64
	dropped    atomic.Uint64
	stallUntil atomic.Int64

	mu     sync.Mutex
	conns  []*serverConn
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and serves until Close.
func Start(o Options) (*Sink, error) {
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// Set on the listener, timestamps are on from a connection's first
	// byte, before its goroutine runs.
	if sc, ok := ln.(syscall.Conn); ok {
		rxstamp.Enable(sc)
	}
	s := &Sink{ln: ln, maxRecords: int64(o.MaxRecords), done: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns the listener's host:port.
func (s *Sink) Addr() string { return s.ln.Addr().String() }

// Dropped returns how many commands were answered but not recorded
// because MaxRecords was reached.
func (s *Sink) Dropped() uint64 { return s.dropped.Load() }

// Records returns the commands recorded so far: connection by connection
// in accept order, each connection's in the order it sent them. A command
// is recorded right after the write of its reply began (so that recording
// never delays a reply): a client that has its reply may have to wait a
// moment for the record. Safe while the sink serves; the slice is a copy,
// the arguments are shared.
func (s *Sink) Records() []Record {
	s.mu.Lock()
	conns := append([]*serverConn(nil), s.conns...)
	s.mu.Unlock()
	var all []Record
	for _, c := range conns {
		c.mu.Lock()
		all = append(all, c.records...)
		c.mu.Unlock()
	}
	return all
}

// Stall makes the sink stop reading and hold its replies for d from now,
// on every connection: a read under way when the stall begins completes
// (a connection's goroutine waits in it), and the replies to what it
// brought are held, like those to commands read before, until the stall
// ends. A stall under way is extended, never shortened.
func (s *Sink) Stall(d time.Duration) {
	until := clock.Now() + int64(d)
	for {
		cur := s.stallUntil.Load()
		if cur >= until || s.stallUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// StallEvery stalls the sink for d every period, the first time one period
// from now, until stop is called or the sink closes. stop may be called
// more than once.
func (s *Sink) StallEvery(d, period time.Duration) (stop func()) {
	quit := make(chan struct{})
	var once sync.Once
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.Stall(d)
			case <-quit:
				return
			case <-s.done:
				return
			}
		}
	}()
	return func() { once.Do(func() { close(quit) }) }
}

// Close stops the sink: the listener and every connection close, and it
// returns once their goroutines have. Records stay readable.
func (s *Sink) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.ln.Close()
	for _, c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Sink) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		c := &serverConn{sink: s, nc: nc, id: len(s.conns)}
		s.conns = append(s.conns, c)
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

// waitStall returns once no stall is under way, or false when the sink
// closed meanwhile.
func (s *Sink) waitStall() bool {
	for {
		left := s.stallUntil.Load() - clock.Now()
		if left <= 0 {
			return true
		}
		t := time.NewTimer(time.Duration(left))
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
			return false
		}
	}
}

// reserve takes room for one more record under MaxRecords; a command it
// refuses is counted as dropped, and its arguments are not copied.
func (s *Sink) reserve() bool {
	for {
		k := s.kept.Load()
		if k >= s.maxRecords {
			s.dropped.Add(1)
			return false
		}
		if s.kept.CompareAndSwap(k, k+1) {
			return true
		}
	}
}

// Arena sizes: argument bytes and argument slices are copied into chunks
// of these sizes, so recording costs no allocation per command.
const (
	byteChunk = 1 << 20
	argvChunk = 1 << 14
	readBuf   = 64 << 10
)

// serverConn is one accepted connection and what it recorded.
type serverConn struct {
	sink *Sink
	nc   net.Conn
	id   int

	mu      sync.Mutex
	records []Record

	bytes []byte   // arena of argument bytes
	args  [][]byte // arena of argument slices
}

func (c *serverConn) serve() {
	defer c.sink.wg.Done()
	defer c.nc.Close()
	var rd io.Reader = c.nc
	stamps := rxstamp.New(c.nc, clock.Now)
	if stamps != nil {
		rd = stamps
	}
	buf := make([]byte, readBuf)
	var out []byte
	var argv [][]byte
	var batch []Record
	r, w := 0, 0
	for {
		if !c.sink.waitStall() {
			return
		}
		if w == len(buf) {
			if r == 0 { // one command fills the buffer: make room
				if len(buf) >= 2*maxBulkLen {
					return
				}
				buf = append(buf, make([]byte, len(buf))...)
			} else {
				w = copy(buf, buf[r:w])
				r = 0
			}
		}
		n, err := rd.Read(buf[w:])
		if n <= 0 {
			if err == nil {
				continue
			}
			return
		}
		read := clock.Now()
		var kernel int64
		if stamps != nil {
			if a := stamps.Arrival(); rxstamp.Plausible(a, read) {
				kernel = a
			}
		}
		w += n
		out, batch = out[:0], batch[:0]
		for {
			var took int
			argv, took, err = parseCommand(buf[r:w], argv[:0])
			if err != nil {
				return
			}
			if took == 0 {
				break
			}
			r += took
			out = appendReply(out, argv)
			if len(argv) > 0 && c.sink.reserve() {
				batch = append(batch, Record{Conn: c.id, Argv: c.keep(argv), Read: read, Kernel: kernel})
			}
		}
		if r == w {
			r, w = 0, 0
		}
		if len(out) == 0 {
			continue
		}
		if !c.sink.waitStall() {
			return
		}
		replied := clock.Now()
		_, werr := c.nc.Write(out)
		c.record(batch, replied)
		if werr != nil {
			return
		}
	}
}

// keep copies argv into the connection's arenas.
func (c *serverConn) keep(argv [][]byte) [][]byte {
	if len(c.args)+len(argv) > cap(c.args) {
		c.args = make([][]byte, 0, max(argvChunk, len(argv)))
	}
	start := len(c.args)
	for _, a := range argv {
		if len(c.bytes)+len(a) > cap(c.bytes) {
			c.bytes = make([]byte, 0, max(byteChunk, len(a)))
		}
		off := len(c.bytes)
		c.bytes = append(c.bytes, a...)
		c.args = append(c.args, c.bytes[off:len(c.bytes):len(c.bytes)])
	}
	return c.args[start:len(c.args):len(c.args)]
}

// record keeps the batch's records, stamped with the reply's write
// instant.
func (c *serverConn) record(batch []Record, replied int64) {
	if len(batch) == 0 {
		return
	}
	c.mu.Lock()
	for _, rec := range batch {
		rec.Replied = replied
		c.records = append(c.records, rec)
	}
	c.mu.Unlock()
}
