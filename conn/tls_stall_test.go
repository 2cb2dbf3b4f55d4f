package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// stallWriter passes the first n bytes a TLS server writes, then holds
// the rest until the connection closes: a server (or a proxy) that stops
// in the middle of its handshake.
type stallWriter struct {
	net.Conn
	mu   sync.Mutex
	left int
}

func (s *stallWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	n := min(len(b), s.left)
	s.left -= n
	s.mu.Unlock()
	if n > 0 {
		if _, err := s.Conn.Write(b[:n]); err != nil {
			return 0, err
		}
	}
	if n < len(b) {
		var one [1]byte
		s.Conn.Read(one[:]) // until the client gives up and closes
		return n, net.ErrClosed
	}
	return n, nil
}

// TestTLSHandshakeStallSaysTimedOut: a port that answers the ClientHello
// and then stalls midway is a TLS port whose handshake timed out; a port
// that says nothing may not be a TLS port; a plain server answering
// garbage does not speak TLS.
func TestTLSHandshakeStallSaysTimedOut(t *testing.T) {
	t.Parallel() // each case waits out a 500 ms dial timeout: side by side
	srv, cli := tlsPair(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		handle func(c net.Conn)
		want   string
		not    string
	}{
		{"stalls after the first bytes of the ServerHello", func(c net.Conn) {
			tls.Server(&stallWriter{Conn: c, left: 20}, srv).Handshake()
		}, "the handshake timed out after the server answered", "is it a TLS port"},
		{"stalls after the ServerHello", func(c net.Conn) {
			tls.Server(&stallWriter{Conn: c, left: 200}, srv).Handshake()
		}, "the handshake timed out after the server answered", "is it a TLS port"},
		{"says nothing", func(c net.Conn) {
			var one [1]byte
			c.Read(one[:])
			c.Read(make([]byte, 1<<16))
			c.Read(one[:])
		}, "is it a TLS port?", "answered"},
		{"answers garbage", func(c net.Conn) { c.Write([]byte("-ERR unknown command\r\n")) }, "does not speak TLS", "timed out"},
		{"answers a little garbage and stalls", func(c net.Conn) {
			c.Write([]byte("-E"))
			var one [1]byte
			c.Read(make([]byte, 1<<16))
			c.Read(one[:])
		}, "not TLS", "TLS port?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := loopback(t, tc.handle)
			_, err := Dial(ctx, Options{Addr: addr, TLS: cli, DialTimeout: 500 * time.Millisecond})
			if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
				t.Fatalf("Dial = %v; want ErrTLS saying %q, not %q", err, tc.want, tc.not)
			}
		})
	}
}
