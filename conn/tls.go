package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/pacer-load/pacer/internal/rxstamp"
	"github.com/pacer-load/pacer/internal/usage"
)

// ErrTLS is wrapped by the error of every failed TLS handshake.
var ErrTLS = errors.New("TLS handshake failed")

// TLSInfo describes a connection's TLS session.
type TLSInfo struct {
	// Handshake is how long the TLS handshake took, from the established
	// TCP connection to the handshake's end. It is part of no request's
	// latency: requests are sent only on open connections.
	Handshake time.Duration
	// Version and CipherSuite are what was negotiated (tls.VersionTLS13,
	// tls.TLS_AES_128_GCM_SHA256, ...).
	Version, CipherSuite uint16
}

// TLS returns the connection's TLS session; ok is false for a plain one.
func (c *Conn) TLS() (info TLSInfo, ok bool) {
	if c.tls == nil {
		return TLSInfo{}, false
	}
	return c.tls.info, true
}

// ForAddr returns o for another server of the same deployment at addr
// (host:port over TCP), such as a cluster node the seed announced: the
// same authentication and TLS settings, but the certificate is checked
// against addr's own host, which TLS.ServerName becomes (an IP address
// is then verified against the certificate's IP SANs, as crypto/tls
// does), unless FixedServerName. The TLS configuration is a copy: o's is
// never changed.
func (o Options) ForAddr(addr string) Options {
	o.Network, o.Addr = "tcp", addr
	if o.TLS == nil || o.FixedServerName {
		return o
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" || host == o.TLS.ServerName {
		return o
	}
	cfg := o.TLS.Clone()
	cfg.ServerName = host
	o.TLS = cfg
	return o
}

// tlsChunk is the most plaintext encrypted at once: one TLS record's
// worth. A command is counted as written when the ciphertext of its chunk
// has gone out whole; the server can read no earlier, as it decrypts whole
// records.
const tlsChunk = 16 << 10

// A TLS connection's writes stay as non-blocking as a plain one's. The
// tls.Conn writes into a capture buffer instead of the socket (that never
// blocks), and the writer moves the captured ciphertext to the socket with
// the same single non-blocking attempt it makes for plaintext:
//
//	Queue ─> out (plaintext) ─Flush─> tls.Conn.Write, ≤16 KiB at a time
//	                                    └─> capture.buf (ciphertext) ─one write(2)─> socket
//
// Each chunk of plaintext remembers where its ciphertext ends; once the
// socket has taken the ciphertext up to there, the chunk's plaintext counts
// as written and its commands are stamped. The reader goroutine reads
// through the tls.Conn, straight from the socket.
type tlsLink struct {
	tc   *tls.Conn
	sock *capture
	info TLSInfo
	// enc is the plaintext of the connection's output stream encrypted so
	// far (on the same count as Conn.flushed): out[outOff+(enc-flushed):]
	// is not yet encrypted.
	enc uint64
	// chunks[head:] are the encrypted chunks whose ciphertext has not all
	// gone out: where each one's plaintext and ciphertext end.
	chunks []tlsChunkEnd
	head   int
}

type tlsChunkEnd struct{ plain, cipher uint64 }

// capture is the transport under the tls.Conn: reads come from the socket;
// writes go to the socket during the TLS handshake and into buf after it.
// The writer goroutine and the tls.Conn (which may answer a key update
// from the reader goroutine) both append, so buf is locked.
type capture struct {
	net.Conn
	// stamps, when set, reads the socket with kernel receive timestamps.
	stamps *rxstamp.Reader
	mu     sync.Mutex
	on     bool
	buf    []byte // buf[off:] is ciphertext not yet written
	off    int
	queued uint64 // ciphertext captured since capture began
	sent   uint64 // of it, written to the socket
	// heard counts the bytes read, first is the first of them: whether
	// the server answered the handshake at all, and in TLS, is what a
	// handshake that times out is told by (tlsErr). Only the goroutine
	// that reads touches them: the handshake's, then the reader's.
	heard int64
	first byte
}

// Read reads the socket: through stamps when the connection keeps kernel
// receive timestamps, so each TLS record read keeps its stamp.
func (s *capture) Read(b []byte) (n int, err error) {
	if s.stamps != nil {
		n, err = s.stamps.Read(b)
	} else {
		n, err = s.Conn.Read(b)
	}
	if n > 0 && s.heard == 0 {
		s.first = b[0]
	}
	s.heard += int64(n)
	return n, err
}

func (s *capture) Write(b []byte) (int, error) {
	s.mu.Lock()
	if !s.on {
		s.mu.Unlock()
		return s.Conn.Write(b)
	}
	s.buf = append(s.buf, b...)
	s.queued += uint64(len(b))
	s.mu.Unlock()
	return len(b), nil
}

// pending returns the ciphertext not yet written. The slice stays valid
// while others append (they may move buf, never change its written part).
func (s *capture) pending() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off > 0 && s.off >= len(s.buf)/2 {
		s.buf = s.buf[:copy(s.buf, s.buf[s.off:])]
		s.off = 0
	}
	return s.buf[s.off:]
}

// wrote accounts for n bytes of pending written to the socket.
func (s *capture) wrote(n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.off += n
	s.sent += uint64(n)
	if s.off == len(s.buf) {
		s.buf, s.off = s.buf[:0], 0
		if cap(s.buf) > maxIdleCipher {
			s.buf = nil // a burst grew it: give its memory back
		}
	}
	s.mu.Unlock()
}

// maxIdleCipher is the largest capture buffer kept once emptied.
const maxIdleCipher = 4 << 20

// startTLS runs the TLS handshake over c's socket and switches c to it.
func (c *Conn) startTLS(ctx context.Context, o Options) error {
	sock := &capture{Conn: c.nc, stamps: c.stamps}
	tc := tls.Client(sock, o.TLS)
	start := time.Now()
	if err := tc.HandshakeContext(ctx); err != nil {
		return tlsErr(ctx, o, err, sock)
	}
	took := time.Since(start)
	sock.mu.Lock()
	sock.on = true
	sock.mu.Unlock()
	st := tc.ConnectionState()
	c.tls = &tlsLink{tc: tc, sock: sock, info: TLSInfo{Handshake: took, Version: st.Version, CipherSuite: st.CipherSuite}}
	c.rd = NewReader(tc, o.Now)
	// The tls.Conn reads records from the socket through stamps: after
	// each Read the stamp of its last segment is there to take.
	c.rd.stamps = c.stamps
	return nil
}

// tlsErr words a failed handshake: why, and a hint when the server seems
// not to speak TLS at all. A handshake that times out is told apart by
// what the server sent (sock): nothing (perhaps not a TLS port), TLS
// records (a TLS port that stalled midway), or bytes that are not TLS (a
// plain port that answered a little).
func tlsErr(ctx context.Context, o Options, err error, sock *capture) error {
	var rh tls.RecordHeaderError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && sock.heard > 0 && tlsRecordType(sock.first):
		return fmt.Errorf("%w: the handshake timed out after the server answered: no more from it within %v of connecting (the port speaks TLS, then stalled): %w", ErrTLS, o.DialTimeout, ctx.Err())
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && sock.heard > 0:
		return usage.Option("", "%w: the server does not speak TLS on %s: it answered %d bytes that are not TLS, then nothing within %v (a plain port? drop {tls}): %w", ErrTLS, o.Addr, sock.heard, o.DialTimeout, ctx.Err())
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: no reply within %v (is it a TLS port?): %w", ErrTLS, o.DialTimeout, ctx.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ErrTLS, ctx.Err())
	case errors.As(err, &rh):
		return usage.Option("", "%w: the server does not speak TLS on %s (a plain port? drop {tls}): %w", ErrTLS, o.Addr, err)
	}
	return fmt.Errorf("%w: %w", ErrTLS, err)
}

// tlsRecordType reports whether b begins a TLS record: change_cipher_spec,
// alert, handshake or application_data (RFC 8446, 5.1).
func tlsRecordType(b byte) bool { return b >= 20 && b <= 23 }

// writeSome is Flush's write: one non-blocking attempt at the socket. It
// returns how many bytes of b (the unwritten output) count as written.
func (c *Conn) writeSome(b []byte) (int, error) {
	if c.tls == nil {
		return c.sockWriteSome(b)
	}
	return c.tls.write(c, b, false)
}

// writeAll writes b completely, blocking as needed; like writeSome it
// returns how many bytes of the output count as written.
func (c *Conn) writeAll(b []byte) (int, error) {
	if c.tls == nil {
		return c.nc.Write(b)
	}
	return c.tls.write(c, b, true)
}

// write encrypts what of b (the unwritten output, from Conn.flushed) is not
// yet encrypted, writes ciphertext to the socket, all of it when block,
// else in one non-blocking attempt, and returns the plaintext bytes whose
// ciphertext is all out.
func (l *tlsLink) write(c *Conn, b []byte, block bool) (int, error) {
	for p := b[l.enc-c.flushed:]; len(p) > 0; {
		n := min(len(p), tlsChunk)
		if _, err := l.tc.Write(p[:n]); err != nil {
			return l.done(c.flushed), err
		}
		l.enc += uint64(n)
		l.sock.mu.Lock()
		end := l.sock.queued
		l.sock.mu.Unlock()
		l.chunks = append(l.chunks, tlsChunkEnd{plain: l.enc, cipher: end})
		p = p[n:]
	}
	err := l.send(c, block)
	return l.done(c.flushed), err
}

// send writes the captured ciphertext: all of it when block, else one
// non-blocking attempt.
func (l *tlsLink) send(c *Conn, block bool) error {
	p := l.sock.pending()
	if len(p) == 0 {
		return nil
	}
	var n int
	var err error
	if block {
		n, err = c.nc.Write(p)
	} else {
		n, err = c.sockWriteSome(p)
	}
	l.sock.wrote(n)
	return err
}

// done returns how many plaintext bytes past flushed count as written:
// those of the chunks whose ciphertext is all out.
func (l *tlsLink) done(flushed uint64) int {
	l.sock.mu.Lock()
	sent := l.sock.sent
	l.sock.mu.Unlock()
	to := flushed
	for l.head < len(l.chunks) && l.chunks[l.head].cipher <= sent {
		to = l.chunks[l.head].plain
		l.head++
	}
	if l.head == len(l.chunks) {
		l.chunks, l.head = l.chunks[:0], 0
	}
	return int(to - flushed)
}

// writeRaw writes b outside the output stream (Write, the handshake's
// commands): through the TLS session when there is one.
func (c *Conn) writeRaw(b []byte) (int, error) {
	if c.tls == nil {
		return c.nc.Write(b)
	}
	if _, err := c.tls.tc.Write(b); err != nil {
		return 0, err
	}
	if err := c.tls.send(c, true); err != nil {
		return 0, err
	}
	return len(b), nil
}
