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
package embedded

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// Config configures a Server.
type Config struct {
	// Addr to listen on; default "127.0.0.1:0" (a free loopback port).
	Addr   string
	Faults Faults
}

// Server is a running embedded target.
type Server struct {
	cfg   Config
	ln    net.Listener
	start int64 // clock.Now at start: the origin of the stall schedule

	mu        sync.Mutex // the "single thread": data, virtual clock, RNG
	dbs       [16]map[string]*object
	busyUntil int64
	rng       uint64
	stats     map[string]*cmdStat
	processed atomic.Uint64

	conns  sync.WaitGroup
	cmu    sync.Mutex
	open   map[net.Conn]struct{}
	closed atomic.Bool
}

type cmdStat struct{ calls uint64 }

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Faults.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ln: ln, start: clock.Now(), rng: cfg.Faults.Seed ^ 0x9e3779b97f4a7c15,
		stats: map[string]*cmdStat{}, open: map[net.Conn]struct{}{}}
	for i := range s.dbs {
		s.dbs[i] = map[string]*object{}
	}
	s.conns.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Start is the server's start on the clock.Now clock; stalls happen at
// Start + k·Every for k ≥ 1.
func (s *Server) Start() int64 { return s.start }

// Faults returns the faults the server injects.
func (s *Server) Faults() Faults { return s.cfg.Faults }

// Processed counts commands executed or answered with an injected error.
func (s *Server) Processed() uint64 { return s.processed.Load() }

// Close stops listening, closes every connection and waits for them.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
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

// uniform returns a number in [0, 1) from the server's seeded generator.
// Call with s.mu held.
func (s *Server) uniform() float64 {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// finish computes when a batch of n commands that arrived at now has been
// executed on the virtual clock. Call with s.mu held.
func (s *Server) finish(now int64, n int) int64 {
	f := s.cfg.Faults
	if f.Delay.Kind == DelayNone {
		return s.afterStall(now)
	}
	t := max(now, s.busyUntil)
	for range n {
		t = s.afterStall(t)
		t += f.Delay.draw(s.uniform())
	}
	s.busyUntil = t
	return s.afterStall(t)
}

// errInjected is the reply of a command hit by --error-rate.
const errInjected = "-ERR injected by pacer (--error-rate)\r\n"

const readBuf = 64 << 10

// serve runs one connection: read what is there, execute every complete
// command in it, answer them with one write when the virtual clock says.
func (s *Server) serve(c net.Conn) {
	defer s.conns.Done()
	defer func() {
		s.cmu.Lock()
		delete(s.open, c)
		s.cmu.Unlock()
		c.Close()
	}()
	cl := &client{srv: s, proto: 2}
	buf := make([]byte, readBuf)
	r, w := 0, 0
	var all [][]byte // the batch's arguments, aliasing buf until it is answered
	var cmds []span
	for {
		if w == len(buf) {
			if r > 0 {
				w = copy(buf, buf[r:w])
				r = 0
			} else if len(buf) < maxRequest {
				nb := make([]byte, 2*len(buf))
				copy(nb, buf[:w])
				buf = nb
			} else {
				c.Write([]byte("-ERR Protocol error: request too large\r\n"))
				return
			}
		}
		n, err := c.Read(buf[w:])
		if err != nil {
			return
		}
		w += n
		now := clock.Now()
		cmds, all = cmds[:0], all[:0]
		var perr error
		for r < w {
			lo := len(all)
			var used int
			all, used, perr = parseCommand(buf[r:w], all)
			if perr != nil || used == 0 {
				all = all[:lo]
				break // bad or incomplete
			}
			if len(all) > lo {
				cmds = append(cmds, span{lo, len(all)})
			}
			r += used
		}
		if len(cmds) > 0 {
			quit := s.execBatch(cl, all, cmds, now)
			if _, err := c.Write(cl.out); err != nil || quit {
				return
			}
			cl.out = cl.out[:0]
		}
		if perr != nil {
			c.Write([]byte("-ERR Protocol error: " + perr.Error() + "\r\n"))
			return
		}
		if r == w {
			r, w = 0, 0
		}
	}
}

// execBatch executes cmds under the server lock, waits until the virtual
// clock has finished them, and leaves the replies in cl.out. It reports
// whether the client asked to QUIT.
func (s *Server) execBatch(cl *client, all [][]byte, cmds []span, now int64) bool {
	quit := false
	s.mu.Lock()
	for _, sp := range cmds {
		if s.cfg.Faults.ErrorRate > 0 && s.uniform() < s.cfg.Faults.ErrorRate {
			cl.out = append(cl.out, errInjected...)
			continue
		}
		if cl.exec(all[sp.lo:sp.hi]) {
			quit = true
		}
	}
	done := s.finish(now, len(cmds))
	s.mu.Unlock()
	s.processed.Add(uint64(len(cmds)))
	if done > now {
		clock.SleepUntil(done)
	}
	return quit
}

// maxRequest bounds one command's size (Redis's proto-max-bulk-len is
// 512 MB; the embedded server is a test target).
const maxRequest = 64 << 20

// span is one command's arguments within a batch: all[lo:hi].
type span struct{ lo, hi int }

// parseCommand reads one command from b, a RESP array of bulk strings or
// an inline command, and appends its arguments to argv (aliasing b). used
// is 0 when b holds no complete command yet; an empty inline line is
// consumed with no arguments.
func parseCommand(b []byte, argv [][]byte) (out [][]byte, used int, err error) {
	if len(b) == 0 {
		return argv, 0, nil
	}
	if b[0] != '*' {
		// Inline: one line of space-separated words.
		end := indexCRLF(b)
		if end < 0 {
			if len(b) > 64<<10 {
				return argv, 0, errors.New("too big inline request")
			}
			return argv, 0, nil
		}
		line := b[:end]
		for len(line) > 0 {
			i := 0
			for i < len(line) && line[i] == ' ' {
				i++
			}
			j := i
			for j < len(line) && line[j] != ' ' {
				j++
			}
			if j > i {
				argv = append(argv, line[i:j])
			}
			line = line[j:]
		}
		return argv, end + 2, nil
	}
	end := indexCRLF(b)
	if end < 0 {
		return argv, 0, nil
	}
	n, ok := atoi(b[1:end])
	if !ok || n < 0 || n > 1<<20 {
		return argv, 0, errors.New("invalid multibulk length")
	}
	pos := end + 2
	for range n {
		if pos >= len(b) {
			return argv, 0, nil
		}
		if b[pos] != '$' {
			return argv, 0, fmt.Errorf("expected '$', got '%c'", b[pos])
		}
		e := indexCRLF(b[pos:])
		if e < 0 {
			return argv, 0, nil
		}
		l, ok := atoi(b[pos+1 : pos+e])
		if !ok || l < 0 || l > maxRequest {
			return argv, 0, errors.New("invalid bulk length")
		}
		start := pos + e + 2
		if start+l+2 > len(b) {
			return argv, 0, nil
		}
		argv = append(argv, b[start:start+l])
		pos = start + l + 2
	}
	return argv, pos, nil
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Wait returns how long a request arriving at t would wait for stalls
// alone, for tests and reports.
func (s *Server) Wait(t int64) time.Duration { return time.Duration(s.afterStall(t) - t) }
