package drivertest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
)

// Pong is the reply to PING, shared so a server's reply allocates nothing.
var Pong = []byte("+PONG\r\n")

// Server is a loopback RESP server for the drivers' end-of-run rules.
// Every command it receives is cmdLen bytes (the tests send one fixed
// template); reply decides what each connection's k-th command gets.
type Server struct {
	ln     net.Listener
	cmdLen int
	// reply returns the bytes to answer the k-th command of a connection,
	// or nil for no answer; close=true closes the connection instead.
	reply    func(k int) (b []byte, close bool)
	noRead   atomic.Bool // stop reading (the socket buffers fill up)
	received atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

// NewServer starts a Server on a free loopback port; the test's cleanup
// stops it and closes its connections.
func NewServer(t testing.TB, cmdLen int, reply func(k int) ([]byte, bool)) *Server {
	t.Helper()
	return NewServerOn(t, "127.0.0.1:0", cmdLen, reply)
}

// NewServerOn is NewServer listening on addr.
func NewServerOn(t testing.TB, addr string, cmdLen int, reply func(k int) ([]byte, bool)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln, cmdLen: cmdLen, reply: reply}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go s.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.noRead.Store(false)
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	buf := make([]byte, 64<<10)
	var out []byte
	pending, k := 0, 0
	for {
		for s.noRead.Load() {
			time.Sleep(time.Millisecond)
		}
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		pending += n
		out = out[:0]
		for pending >= s.cmdLen {
			pending -= s.cmdLen
			s.received.Add(1)
			b, closeNow := s.reply(k)
			k++
			if closeNow {
				c.Write(out)
				return
			}
			out = append(out, b...)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Dial opens n connections to the server (see Dial).
func (s *Server) Dial(t testing.TB, n, maxInflight int) []*conn.Conn {
	t.Helper()
	return Dial(t, s.Addr(), n, maxInflight)
}

// StopReading makes every connection stop reading, so the socket
// buffers fill up and the client's writes block; ResumeReading undoes it.
func (s *Server) StopReading() { s.noRead.Store(true) }

// ResumeReading lets the connections read again.
func (s *Server) ResumeReading() { s.noRead.Store(false) }

// Received is how many whole commands the server has read.
func (s *Server) Received() int64 { return s.received.Load() }

// Accepted is how many connections the server has accepted.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
