// Package embedded is pacer's built-in target: a small in-process RESP
// server that answers every command of redis-benchmark's suite, and those
// a client, pacer's own queries and a prefill need around them (AUTH,
// HELLO, SELECT, INFO, CONFIG, LATENCY, COMMAND, SCAN…), with pub/sub,
// streams and client-side caching (CLIENT TRACKING), so pacer can be
// tried with nothing installed, and that injects faults on purpose —
// stalls, extra service time, error replies — so the difference between
// open and closed loops can be shown on demand.
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
//
// It stands beside pacer's layers, not in them: it imports none of them,
// and nothing that measures imports it. The command starts it for
// --embedded and `pacer serve`, and Go tests and examples use it as a
// target on a free loopback port (Start, then Server.Addr).
package embedded

import (
	"crypto/tls"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"

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
	// 48 MiB (bench/bounds serve-30x60MB-sets), under the 256 MB that a
	// server with default flags may take. A command that needs more than the cap is refused.
	DefaultMaxClientMemory = 48 << 20
	// DefaultMaxMemory bounds the dataset (maxmemory): enough for the
	// keyspaces of the README's examples, little enough not to exhaust a
	// laptop.
	DefaultMaxMemory = 2 << 30
)

// maxBulkLen is the longest bulk string the protocol accepts, Redis's
// proto-max-bulk-len default: a longer length is a protocol error, and a
// string command (APPEND) may not build a longer value.
const maxBulkLen = 512 << 20

// Config configures a Server. Zero limits take their defaults.
type Config struct {
	// Addr to listen on; default "127.0.0.1:0" (a free loopback port).
	Addr   string
	Faults Faults
	// MaxQueryBuffer bounds the bytes one connection may hold of a command
	// not yet complete (Redis's client-query-buffer-limit). A command that
	// needs more is answered with an error and the connection closed; a
	// bulk length above 512 MiB (Redis's proto-max-bulk-len) is a protocol
	// error. Default DefaultMaxQueryBuffer.
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
	// MaxPubsubBuffer bounds a subscriber's deliveries not yet written
	// (Redis's client-output-buffer-limit pubsub, hard limit): a
	// subscriber that does not read fast enough is disconnected when its
	// pending output would exceed it. Default DefaultMaxPubsubBuffer.
	MaxPubsubBuffer int
	// MaxTrackedKeys bounds the keys remembered for clients with CLIENT
	// TRACKING on in the default mode (Redis's tracking-table-max-keys):
	// past it, a random key is forgotten and its readers are sent its
	// invalidation, as if it had changed. Default DefaultMaxTrackedKeys;
	// negative: no limit.
	MaxTrackedKeys int
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
	if c.MaxPubsubBuffer == 0 {
		c.MaxPubsubBuffer = DefaultMaxPubsubBuffer
	}
	if c.MaxTrackedKeys == 0 {
		c.MaxTrackedKeys = DefaultMaxTrackedKeys
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
	if c.MaxQueryBuffer < 0 || c.MaxOutputBuffer < 0 || c.MaxClientMemory < 0 || c.MaxPubsubBuffer < 0 {
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
	start int64         // clock.Now at start: stalls happen at start + k·Every for k ≥ 1
	quit  chan struct{} // closed by Close: wakes connections sleeping on the virtual clock

	waker   atomic.Pointer[clock.Waker] // the virtual clock's sleeps (vclock.go); started at the first
	wakerMu sync.Mutex                  // orders startWaker with Close

	mu        sync.Mutex // the "single thread": data, virtual clock, RNG, stats
	dbs       [16]map[string]*object
	used      int64 // the dataset's estimated bytes (see memory.go)
	busyUntil int64
	rng       *rand.Rand
	stats     []cmdStats // per command of commandTable
	processed atomic.Uint64
	// pubsub holds the subscriptions; scratch encodes deliveries.
	pubsub  registry
	scratch client
	// waiters are the clients blocked on each stream key.
	waiters map[string]map[*client]struct{}
	// trk is client-side caching's state (CLIENT TRACKING).
	trk tracking

	clientMem atomic.Int64 // bytes of connection buffers charged beyond their base

	conns  sync.WaitGroup
	cmu    sync.Mutex
	open   map[net.Conn]struct{}
	closed atomic.Bool
}

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) { return startAt(cfg, clock.Now()) }

// MustStart is Start for tests and examples, where a target that cannot
// start (an invalid Config, no free loopback port) ends the program: like
// httptest.NewServer, it panics instead of returning the error.
func MustStart(cfg Config) *Server {
	s, err := Start(cfg)
	if err != nil {
		panic("embedded: " + err.Error())
	}
	return s
}

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
	s.stopWaker()
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
