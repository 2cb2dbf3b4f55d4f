// Package embedded is pacer's built-in target: a small in-process RESP
// server that answers every command of redis-benchmark's suite (and the
// handful a client needs around them), so pacer can be tried with nothing
// installed, and that injects faults on purpose — stalls, extra service
// time, error replies — so the difference between open and closed loops
// can be shown on demand.
//
// It models Redis's single thread: commands execute one at a time under
// one lock, a connection's pipelined batch is read, executed and answered
// with one write, and an injected delay occupies the server, delaying
// every command queued behind it. Faults are applied on a virtual
// execution clock: a batch's replies are written when the clock says it
// finished, after any stall that overlaps.
//
// Its memory is bounded as Redis's is by configuration: per connection
// (unfinished input, unwritten replies), for all connections together,
// and for the dataset (see Config).
package embedded

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// Defaults of the limits in Config.
const (
	// DefaultMaxQueryBuffer bounds one connection's unfinished input: the
	// largest command the embedded target takes is a little under 64 MiB
	// (and under DefaultMaxClientMemory, which is lower, by default).
	DefaultMaxQueryBuffer = 64 << 20
	// DefaultMaxOutputBuffer bounds one connection's unwritten replies.
	DefaultMaxOutputBuffer = 64 << 20
	// DefaultMaxClientMemory bounds the buffers of all connections
	// together, beyond their base (connBase each). The process holds
	// several times the cap: the collector lets the heap reach about twice
	// what is live, a buffer grown by doubling leaves its smaller copies
	// behind, and freed pages return to the system late. With 30 clients
	// sending unfinished 60 MB SETs, pacer serve peaked at 735 MB resident
	// with a 256 MiB cap, 186-270 MB with 64 MiB and 143-171 MB with
	// 48 MiB (bench/bounds serve-30x60MB-sets), under the 256 MB bound of
	// issue 9. A command that needs more than the cap is refused.
	DefaultMaxClientMemory = 48 << 20
	// DefaultMaxMemory bounds the dataset (maxmemory): enough for the
	// keyspaces of the README's examples, little enough not to exhaust a
	// laptop.
	DefaultMaxMemory = 2 << 30
)

// MaxBulkLen is the longest bulk string the protocol accepts, Redis's
// proto-max-bulk-len default: a longer length is a protocol error, and a
// string command (APPEND) may not build a longer value.
const MaxBulkLen = 512 << 20

// Config configures a Server. Zero limits take their defaults.
type Config struct {
	// Addr to listen on; default "127.0.0.1:0" (a free loopback port).
	Addr   string
	Faults Faults
	// MaxQueryBuffer bounds the bytes one connection may hold of a command
	// not yet complete (Redis's client-query-buffer-limit). A command that
	// needs more is answered with an error and the connection closed; a
	// bulk length above MaxBulkLen is a protocol error. Default
	// DefaultMaxQueryBuffer.
	MaxQueryBuffer int
	// MaxOutputBuffer bounds one connection's replies not yet written
	// (Redis's client-output-buffer-limit). Replies are written in chunks
	// as a batch executes, and a client that does not read stops being
	// read, so only a single reply larger than this reaches it: the
	// connection is then closed. Default DefaultMaxOutputBuffer.
	MaxOutputBuffer int
	// MaxClientMemory bounds the input and output buffers of all
	// connections together, beyond a base of 64 KiB each (Redis's
	// maxmemory-clients). A connection whose buffers would take the total
	// past it is closed, with an error reply when its input did. Default
	// DefaultMaxClientMemory.
	MaxClientMemory int
	// MaxMemory bounds the dataset, estimated as the bytes of keys, values
	// and their bookkeeping (INFO memory: used_memory). While it is
	// exceeded, commands that may add data are answered -OOM, as Redis
	// does with maxmemory-policy noeviction; reads and deletes still work.
	// Default DefaultMaxMemory; negative: no limit.
	MaxMemory int64
	// Password, when set, is required of every connection before its
	// first command (AUTH password, or AUTH user password): as Redis with
	// one ACL user, User ("default" when empty).
	User, Password string
	// TLS, when set, makes the server speak TLS only (it needs a
	// certificate). The TLS handshake happens on a connection's first read.
	TLS *tls.Config
}

// withDefaults fills in zero limits.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.MaxQueryBuffer == 0 {
		c.MaxQueryBuffer = DefaultMaxQueryBuffer
	}
	if c.MaxOutputBuffer == 0 {
		c.MaxOutputBuffer = DefaultMaxOutputBuffer
	}
	if c.MaxClientMemory == 0 {
		c.MaxClientMemory = DefaultMaxClientMemory
	}
	switch {
	case c.MaxMemory == 0:
		c.MaxMemory = DefaultMaxMemory
	case c.MaxMemory < 0:
		c.MaxMemory = math.MaxInt64
	}
	return c
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.MaxQueryBuffer < 0 || c.MaxOutputBuffer < 0 || c.MaxClientMemory < 0 {
		return errors.New("embedded target: buffer limits must not be negative")
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		return errors.New("embedded target: TLS needs a certificate")
	}
	return c.Faults.Validate()
}

// Server is a running embedded target.
type Server struct {
	cfg   Config
	ln    net.Listener
	start int64         // clock.Now at start: the origin of the stall schedule
	quit  chan struct{} // closed by Close: wakes connections sleeping on the virtual clock

	mu        sync.Mutex // the "single thread": data, virtual clock, RNG, stats
	dbs       [16]map[string]*object
	used      int64 // the dataset's estimated bytes (see memory.go)
	busyUntil int64
	rng       *rand.Rand
	stats     []cmdStats // per command of commandTable
	processed atomic.Uint64

	clientMem atomic.Int64 // bytes of connection buffers charged beyond their base

	conns  sync.WaitGroup
	cmu    sync.Mutex
	open   map[net.Conn]struct{}
	closed atomic.Bool
}

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) { return startAt(cfg, clock.Now()) }

// startAt starts a server whose stall schedule begins at origin (tests
// move it to reach a stall without waiting).
func startAt(cfg Config, origin int64) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := newServer(cfg)
	s.ln, s.start = ln, origin
	s.conns.Add(1)
	go s.accept()
	return s, nil
}

// newServer builds a server's state without a listener.
func newServer(cfg Config) *Server {
	s := &Server{cfg: cfg, quit: make(chan struct{}), rng: newRNG(cfg.Faults.Seed),
		stats: make([]cmdStats, len(commandTable)), open: map[net.Conn]struct{}{}}
	for i := range s.dbs {
		s.dbs[i] = map[string]*object{}
	}
	return s
}

// pcgStream is the second half of the fault generator's seed: any fixed
// value, so that Faults.Seed alone decides the sequence.
const pcgStream = 0x9e3779b97f4a7c15

// newRNG is the fault generator for seed: the same seed, the same delays
// and injected errors.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, pcgStream)) }

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Start is the server's start on the clock.Now clock; stalls happen at
// Start + k·Every for k ≥ 1.
func (s *Server) Start() int64 { return s.start }

// Faults returns the faults the server injects.
func (s *Server) Faults() Faults { return s.cfg.Faults }

// Processed counts commands executed or answered with an injected error.
func (s *Server) Processed() uint64 { return s.processed.Load() }

// Close stops listening, closes every connection and waits for them. It
// returns promptly whatever they are doing: sleeping out a stall or a
// delay, or writing to a client that does not read.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.quit)
	err := s.ln.Close()
	s.cmu.Lock()
	for c := range s.open {
		c.Close()
	}
	s.cmu.Unlock()
	s.conns.Wait()
	return err
}

func (s *Server) accept() {
	defer s.conns.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.cmu.Lock()
		if s.closed.Load() {
			s.cmu.Unlock()
			c.Close()
			return
		}
		s.open[c] = struct{}{}
		s.conns.Add(1)
		s.cmu.Unlock()
		go s.serve(c)
	}
}

// afterStall moves t out of a stall window: to its end if t falls inside.
func (s *Server) afterStall(t int64) int64 {
	f := s.cfg.Faults
	if f.Every <= 0 {
		return t
	}
	rel := t - s.start
	k := rel / int64(f.Every)
	if off := rel - k*int64(f.Every); k >= 1 && off < int64(f.Stall) {
		return s.start + k*int64(f.Every) + int64(f.Stall)
	}
	return t
}

// StallsBetween returns the stall windows overlapping [from, to) on the
// clock.Now clock.
func (s *Server) StallsBetween(from, to int64) [][2]int64 {
	f := s.cfg.Faults
	if f.Every <= 0 {
		return nil
	}
	var out [][2]int64
	for k := max(int64(1), (from-s.start)/int64(f.Every)); ; k++ {
		a := s.start + k*int64(f.Every)
		if a >= to {
			return out
		}
		if b := a + int64(f.Stall); b > from {
			out = append(out, [2]int64{a, b})
		}
	}
}

// finish computes when a batch of n commands that arrived at now has been
// executed on the virtual clock, and stores in delays (when it has room)
// the delay drawn for each. Call with s.mu held.
func (s *Server) finish(now int64, n int, delays []int64) int64 {
	f := s.cfg.Faults
	if f.Delay.Kind == DelayNone {
		return s.afterStall(now)
	}
	t := max(now, s.busyUntil)
	for k := range n {
		t = s.afterStall(t)
		d := f.Delay.draw(s.rng.Float64())
		if k < len(delays) {
			delays[k] = d
		}
		t += d
	}
	s.busyUntil = t
	return s.afterStall(t)
}

// preciseWait is how close to a deadline sleepUntil hands over to
// clock.SleepUntil's precise (and uninterruptible) sleep.
const preciseWait = 2 * time.Millisecond

// sleepUntil waits until deadline on the clock.Now clock, or until Close:
// false when the server closed first. A timer covers all but the last
// preciseWait, so Close wakes it at once.
func (s *Server) sleepUntil(deadline int64, t **time.Timer) bool {
	for {
		left := time.Duration(deadline - clock.Now())
		if left <= preciseWait {
			clock.SleepUntil(deadline)
			return !s.closed.Load()
		}
		if *t == nil {
			*t = time.NewTimer(left - time.Millisecond)
		} else {
			(*t).Reset(left - time.Millisecond)
		}
		select {
		case <-(*t).C:
		case <-s.quit:
			(*t).Stop()
			return false
		}
	}
}

// isSetup reports whether a command sets a connection up or asks the
// server about itself rather than being part of the load: HELLO, AUTH,
// SELECT, CLIENT, a PING as the connection's first command (how pacer
// checks a new connection), and INFO, CONFIG and LATENCY (what pacer asks
// around each test). --error-rate spares them, so injected errors land on
// the workload, not on the handshake or the server's statistics.
func isSetup(args [][]byte, first bool) bool {
	switch {
	case is(args[0], "HELLO"), is(args[0], "AUTH"), is(args[0], "SELECT"), is(args[0], "CLIENT"),
		is(args[0], "INFO"), is(args[0], "CONFIG"), is(args[0], "LATENCY"):
		return true
	}
	return first && is(args[0], "PING")
}

// errInjected is the reply of a command hit by --error-rate.
const errInjected = "-ERR injected by pacer (--error-rate)\r\n"

// Buffer sizes of a connection. A connection's first connBase bytes of
// buffers are not charged to Config.MaxClientMemory (what Redis calls a
// client's fixed overhead); buffers grown for a large command or reply
// beyond the keep sizes are released once it is done.
const (
	baseInput  = 16 << 10 // read buffer of an idle connection (Redis's PROTO_IOBUF_LEN)
	connBase   = 64 << 10
	keepInput  = 1 << 20
	keepOutput = 1 << 20
	keepArgs   = 64 << 10
	// flushAt is the reply bytes after which a batch's replies so far are
	// written before it goes on: a client that pipelines large replies
	// and does not read holds one chunk, not the batch's replies.
	flushAt = 64 << 10
	// maxBatch is the most commands executed between two writes (it
	// bounds the parsed arguments of a batch of tiny commands).
	maxBatch = 1024
	// argSize and spanSize are the bytes of an argument's slice header
	// and of a command's span, charged for parsed batches.
	argSize  = 24
	spanSize = 16
	// errorWriteTimeout bounds the last write to a connection being
	// closed for exceeding a limit: it may not be reading.
	errorWriteTimeout = time.Second
)

// Errors that close a connection.
var (
	errQueryLimit   = errors.New("query buffer limit")
	errClientMemory = errors.New("client memory limit")
	errOutputLimit  = errors.New("output buffer limit")
)

// connection is one client connection's buffers and state.
type connection struct {
	srv     *Server
	nc      net.Conn
	cl      client
	buf     []byte // input; buf[r:w] is unparsed
	r, w    int
	need    int      // bytes (from r) the incomplete command needs at least; 0: unknown
	all     [][]byte // the batch's arguments, aliasing buf until it is answered
	cmds    []span
	charged int64 // bytes charged to srv.clientMem
	timer   *time.Timer
	started bool // a command has been executed (see isSetup)
	// ran and delays are a chunk's commands as executed and the delays
	// drawn for them (see exec).
	ran    []ran
	delays []int64
}

// ran is one command of a chunk: its table index (-1: not executed) and
// how long it took.
type ran struct {
	idx  int
	took int64
}

// span is one command's arguments within a batch: all[lo:hi].
type span struct{ lo, hi int }

// serve runs one connection: read what is there, execute every complete
// command in it, answer them when the virtual clock says.
func (s *Server) serve(nc net.Conn) {
	// The socket is what Close closes (a TLS close would first try to
	// write its alert to a client that may not read).
	rw := nc
	if s.cfg.TLS != nil {
		rw = tls.Server(nc, s.cfg.TLS)
	}
	cn := &connection{srv: s, nc: rw, cl: client{srv: s, proto: 2, noauth: s.cfg.Password != ""}, buf: make([]byte, baseInput)}
	defer func() {
		if cn.timer != nil {
			cn.timer.Stop()
		}
		s.clientMem.Add(-cn.charged)
		s.cmu.Lock()
		delete(s.open, nc)
		s.cmu.Unlock()
		nc.Close()
		s.conns.Done()
	}()
	more := false // the last parse stopped at maxBatch with input left
	for {
		if !more {
			if err := cn.makeRoom(); err != nil {
				cn.refuse(err)
				return
			}
			n, err := rw.Read(cn.buf[cn.w:])
			if err != nil {
				return
			}
			cn.w += n
		}
		now := clock.Now()
		var perr error
		more, perr = cn.parse()
		if len(cn.cmds) > 0 && !cn.exec(now) {
			return
		}
		if perr != nil {
			cn.refuse(perr)
			return
		}
		if cn.r == cn.w {
			cn.r, cn.w = 0, 0
			cn.shrink()
		}
	}
}

// makeRoom makes space to read into: it moves the unparsed input to the
// front of the buffer or grows the buffer, within the limits.
func (cn *connection) makeRoom() error {
	if cn.w < len(cn.buf) {
		return nil
	}
	if cn.r > 0 {
		cn.w = copy(cn.buf, cn.buf[cn.r:cn.w])
		cn.r = 0
		return nil
	}
	limit := cn.srv.cfg.MaxQueryBuffer
	if len(cn.buf) >= limit {
		return errQueryLimit
	}
	size := 2 * len(cn.buf) // grow with what the client sends, not with what it announces
	if cn.need > len(cn.buf) && cn.need < size {
		size = cn.need
	}
	size = min(size, limit)
	if !cn.charge(size) {
		return errClientMemory
	}
	nb := make([]byte, size)
	copy(nb, cn.buf[:cn.w])
	cn.buf = nb
	return nil
}

// charge moves the connection's charge to the total to what its buffers
// hold, with an input buffer of bufCap bytes. It reports false, charging
// nothing more, when the total would exceed Config.MaxClientMemory.
func (cn *connection) charge(bufCap int) bool {
	held := int64(bufCap + cap(cn.cl.out) + argSize*cap(cn.all) + spanSize*cap(cn.cmds))
	want := max(0, held-connBase)
	d := want - cn.charged
	if d == 0 {
		return true
	}
	if d > 0 && cn.srv.clientMem.Add(d) > int64(cn.srv.cfg.MaxClientMemory) {
		cn.srv.clientMem.Add(-d)
		return false
	}
	if d < 0 {
		cn.srv.clientMem.Add(d)
	}
	cn.charged = want
	return true
}

// parse splits buf[r:w] into the batch's commands, at most maxBatch of
// them; more reports that complete input may remain.
func (cn *connection) parse() (more bool, err error) {
	cn.cmds, cn.all = cn.cmds[:0], cn.all[:0]
	for cn.r < cn.w {
		if len(cn.cmds) == maxBatch {
			more = true
			break
		}
		lo := len(cn.all)
		var used int
		cn.all, used, cn.need, err = parseCommand(cn.buf[cn.r:cn.w], cn.all)
		if err == nil && cn.need > cn.srv.cfg.MaxQueryBuffer {
			err = errQueryLimit
		}
		if err != nil || used == 0 {
			clear(cn.all[lo:]) // no references into buf beyond len
			cn.all = cn.all[:lo]
			break
		}
		if len(cn.all) > lo {
			cn.cmds = append(cn.cmds, span{lo, len(cn.all)})
		}
		cn.r += used
	}
	if !cn.charge(cap(cn.buf)) && err == nil {
		err = errClientMemory
	}
	return more, err
}

// exec executes the batch and writes its replies: a chunk of commands
// at a time under the server lock, each chunk's replies written when the
// virtual clock has finished it. It reports false when the connection
// must end (QUIT, Close, a write error or a limit).
func (cn *connection) exec(now int64) bool {
	s, cl := cn.srv, &cn.cl
	defer func() { clear(cn.all) }() // let the input buffer go once answered
	for i := 0; i < len(cn.cmds); {
		s.mu.Lock()
		cl.mark = clock.Now()
		j := i
		for j < len(cn.cmds) && len(cl.out) < flushAt && !cl.quit {
			sp := cn.cmds[j]
			j++
			args := cn.all[sp.lo:sp.hi]
			first := !cn.started
			cn.started = true
			if s.cfg.Faults.ErrorRate > 0 && !isSetup(args, first) && s.rng.Float64() < s.cfg.Faults.ErrorRate {
				cl.out = append(cl.out, errInjected...)
				cn.ran = append(cn.ran, ran{idx: -1})
				continue
			}
			cl.exec(args)
			cn.ran = append(cn.ran, ran{idx: cl.ran, took: cl.took})
		}
		cl.mark = 0
		var done int64
		if s.cfg.Faults.Delay.Kind == DelayNone {
			done = s.finish(now, j-i, nil)
		} else {
			// The delay drawn for a command is part of its time (INFO
			// commandstats, LATENCY HISTOGRAM).
			cn.delays = slices.Grow(cn.delays[:0], j-i)[:j-i]
			done = s.finish(now, j-i, cn.delays)
			for k, r := range cn.ran {
				if r.idx >= 0 {
					s.addDelay(r.idx, r.took, cn.delays[k])
				}
			}
		}
		cn.ran = cn.ran[:0]
		s.mu.Unlock()
		s.processed.Add(uint64(j - i))
		i = j
		if cap(cl.out) > s.cfg.MaxOutputBuffer || !cn.charge(cap(cn.buf)) {
			return false // like Redis, no reply: the client is not reading them
		}
		if done > now && !s.sleepUntil(done, &cn.timer) {
			return false
		}
		if _, err := cn.nc.Write(cl.out); err != nil || cl.quit {
			return false
		}
		cl.out = cl.out[:0]
	}
	return true
}

// shrink releases buffers grown for a large command or reply once the
// connection has no unparsed input.
func (cn *connection) shrink() {
	if cap(cn.buf) > keepInput {
		cn.buf = make([]byte, baseInput)
	}
	if cap(cn.cl.out) > keepOutput {
		cn.cl.out = nil
	}
	if cap(cn.all) > keepArgs {
		cn.all, cn.cmds = nil, nil
	}
	cn.charge(cap(cn.buf))
}

// refuse answers err, which ends the connection, as the client sees it.
func (cn *connection) refuse(err error) {
	cfg := cn.srv.cfg
	var msg string
	switch err {
	case errQueryLimit:
		msg = fmt.Sprintf("-ERR Protocol error: query buffer limit: a command needs more than %d bytes (client-query-buffer-limit of the embedded target)\r\n", cfg.MaxQueryBuffer)
	case errClientMemory:
		msg = fmt.Sprintf("-ERR client memory limit: the buffers of all connections would exceed %d bytes (maxmemory-clients of the embedded target)\r\n", cfg.MaxClientMemory)
	default:
		msg = "-ERR Protocol error: " + err.Error() + "\r\n"
	}
	// Let the big buffers go before a write that may wait for a client
	// that does not read.
	cn.buf, cn.all = nil, nil
	cn.charge(0)
	cn.nc.SetWriteDeadline(time.Now().Add(errorWriteTimeout))
	cn.nc.Write([]byte(msg))
}

// Wait returns how long a request arriving at t would wait for stalls
// alone, for tests and reports.
func (s *Server) Wait(t int64) time.Duration { return time.Duration(s.afterStall(t) - t) }
