// Package hostile provides misbehaving RESP servers on loopback for tests:
// servers that never read, close at once, refuse with maxclients, answer
// twice, push before they answer, echo the password in an error, invent
// error codes, or answer nothing at all. Each one is a Behaviour run on every
// accepted connection of a Server.
//
// It exists so that every hostile reproduction of the hardening rounds is a
// test in the package it concerns, against one shared, reviewed set of
// servers. It binds loopback addresses only.
package hostile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Limits of the command reader, so a test server cannot be made to hold an
// unbounded amount of memory either.
const (
	maxArgs    = 1 << 16
	maxBulkLen = 64 << 20
	maxLine    = 64 << 10
)

// Server is a hostile server listening on a free loopback port.
type Server struct {
	// Addr is host:port of the listener.
	Addr string

	ln       net.Listener
	behave   Behaviour
	accepted atomic.Int64
	commands atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   chan struct{}
	once     sync.Once
}

// Behaviour is what the server does with one accepted connection. It returns
// when it is done with the connection (which is then closed) or when reading
// or writing fails because the server is closing.
type Behaviour func(c *Client)

// Client is the server's side of one accepted connection.
type Client struct {
	net.Conn
	srv *Server
	rd  *bufio.Reader
}

// Start listens on 127.0.0.1:0 and serves b on every connection until the
// test ends.
func Start(tb testing.TB, b Behaviour) *Server {
	tb.Helper()
	return StartOn(tb, "127.0.0.1:0", b)
}

// StartOn is Start on addr, a loopback address: 127.0.0.2 stands for a
// second host, a fixed port for a server a test must find there.
func StartOn(tb testing.TB, addr string, b Behaviour) *Server {
	tb.Helper()
	s, err := ListenOn(addr, b)
	if err != nil {
		tb.Fatalf("hostile: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Listen is Start for callers without a testing.TB (measurement programs).
// The caller must Close the server.
func Listen(b Behaviour) (*Server, error) { return ListenOn("127.0.0.1:0", b) }

// ListenOn is Listen on addr, which must be a loopback address.
func ListenOn(addr string, b Behaviour) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln, behave: b,
		conns: map[net.Conn]struct{}{}, closed: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Host and Port split Addr, for command lines (-h, -p).
func (s *Server) Host() string { h, _, _ := net.SplitHostPort(s.Addr); return h }

// Port is the listener's port as a string.
func (s *Server) Port() string { _, p, _ := net.SplitHostPort(s.Addr); return p }

// Accepted returns how many connections the server has accepted.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

// Commands returns how many commands the server has read.
func (s *Server) Commands() int { return int(s.commands.Load()) }

// Close stops listening, closes every connection and waits for the
// behaviours to return. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		select {
		case <-s.closed:
			s.mu.Unlock()
			nc.Close()
			return
		default:
		}
		s.conns[nc] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, nc)
				s.mu.Unlock()
				nc.Close()
			}()
			s.behave(&Client{Conn: nc, srv: s, rd: bufio.NewReader(nc)})
		}()
	}
}

// Closing is closed when the server is shutting down, for behaviours that
// wait without reading.
func (c *Client) Closing() <-chan struct{} { return c.srv.closed }

// Write sends raw bytes (already RESP-encoded).
func (c *Client) Write(raw string) error {
	_, err := io.WriteString(c.Conn, raw)
	return err
}

// ReadCommand reads one command, a RESP array of bulk strings or an inline
// command line, and returns its arguments.
func (c *Client) ReadCommand() ([]string, error) {
	line, err := c.line()
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		c.srv.commands.Add(1)
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > maxArgs {
		return nil, fmt.Errorf("hostile: bad array header %q", line)
	}
	args := make([]string, 0, n)
	for range n {
		h, err := c.line()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 || h[0] != '$' {
			return nil, fmt.Errorf("hostile: want a bulk string, got %q", h)
		}
		size, err := strconv.Atoi(h[1:])
		if err != nil || size < 0 || size > maxBulkLen {
			return nil, fmt.Errorf("hostile: bad bulk length %q", h)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(c.rd, buf); err != nil {
			return nil, err
		}
		args = append(args, string(buf[:size]))
	}
	c.srv.commands.Add(1)
	return args, nil
}

func (c *Client) line() (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := c.rd.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > maxLine {
			return "", errors.New("hostile: line too long")
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

// Serve answers every command with what reply returns for its arguments
// (raw RESP, written as is; "" writes nothing).
func Serve(reply func(args []string) string) Behaviour {
	return func(c *Client) {
		for {
			args, err := c.ReadCommand()
			if err != nil {
				return
			}
			if r := reply(args); r != "" {
				if c.Write(r) != nil {
					return
				}
			}
		}
	}
}

// Answer replies raw to every command, e.g. "-NOAUTH Authentication required.\r\n".
func Answer(raw string) Behaviour {
	return Serve(func([]string) string { return raw })
}

// OK answers +OK to AUTH/SELECT/HELLO-free clients and a small bulk to
// everything else: a well-behaved baseline to compare against.
var OK = Serve(func(args []string) string {
	if len(args) > 0 && strings.EqualFold(args[0], "PING") {
		return "+PONG\r\n"
	}
	return "+OK\r\n"
})

// NeverRead accepts and never reads: the client's writes fill the socket
// buffers and then block.
func NeverRead(c *Client) { <-c.Closing() }

// Silent reads every command and never answers.
func Silent(c *Client) {
	for {
		if _, err := c.ReadCommand(); err != nil {
			return
		}
	}
}

// AcceptClose closes every connection as soon as it is accepted.
func AcceptClose(*Client) {}

// MaxClientsReply is what Redis writes to a connection beyond maxclients
// before closing it.
const MaxClientsReply = "-ERR max number of clients reached\r\n"

// MaxClients behaves like Redis beyond its maxclients: the error, then close.
func MaxClients(c *Client) { _ = c.Write(MaxClientsReply) }

// DoubleReply answers every command twice.
var DoubleReply = Serve(func(args []string) string {
	if len(args) > 0 && strings.EqualFold(args[0], "PING") {
		return "+PONG\r\n+PONG\r\n"
	}
	return "+OK\r\n+OK\r\n"
})

// UnsolicitedFirst writes a reply before any command arrives, then answers
// every command once.
func UnsolicitedFirst(c *Client) {
	if c.Write("+OK\r\n") != nil {
		return
	}
	OK(c)
}

// PushBeforeReply precedes every reply with a RESP3 push; it refuses AUTH
// (-WRONGPASS) so a client that takes the push for the reply wrongly
// believes it is authenticated.
var PushBeforeReply = Serve(func(args []string) string {
	const push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n"
	if len(args) > 0 && strings.EqualFold(args[0], "AUTH") {
		return push + "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	}
	return push + "+OK\r\n"
})

// EchoAuthError refuses AUTH with an error that repeats the arguments it was
// given, password included; other commands get +OK.
var EchoAuthError = Serve(func(args []string) string {
	if len(args) > 0 && strings.EqualFold(args[0], "AUTH") {
		return "-WRONGPASS bad credentials " + strings.Join(args[1:], " ") + "\r\n"
	}
	return "+OK\r\n"
})

// EscapeText answers every command with an error whose code and text carry
// terminal escape sequences.
var EscapeText = Answer("-\x1b[31mEVIL\x1b[0m text \x1b]0;owned\x07 \x1b[2J\r\n")

// DistinctErrors answers every command with an error of a code never seen
// before (E1, E2, …), to test that error maps stay bounded.
func DistinctErrors() Behaviour {
	var n atomic.Uint64
	return Serve(func([]string) string {
		return "-E" + strconv.FormatUint(n.Add(1), 10) + " distinct error\r\n"
	})
}
