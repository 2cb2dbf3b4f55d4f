//go:build unix

package conn

import "syscall"

// rawWriter makes one non-blocking write attempt on a file descriptor. Its
// write method is bound once per connection: a closure built per call would
// escape to the heap through syscall.RawConn and allocate on every flush.
type rawWriter struct {
	raw  syscall.RawConn
	buf  []byte
	n    int
	err  error
	call func(fd uintptr) bool
	// writeWait and wrote: writeThenWait's, bound once like call.
	writeWait func(fd uintptr) bool
	wrote     bool
}

func newRawWriter(raw syscall.RawConn) *rawWriter {
	w := &rawWriter{raw: raw}
	w.call = w.write
	w.writeWait = w.writeThenWait
	return w
}

// writeThenWait is WriteThenWait's read callback: its first call writes
// buf, all of it, and asks the netpoller to wait; the next call (the
// socket is readable, or may be) ends the wait. A full socket buffer or
// an error ends it at once with the rest unwritten, for Write.
func (w *rawWriter) writeThenWait(fd uintptr) bool {
	if w.wrote {
		return true
	}
	for len(w.buf) > 0 {
		n, err := syscall.Write(int(fd), w.buf)
		if n > 0 {
			w.n += n
			w.buf = w.buf[n:]
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return true
		}
	}
	w.wrote = true
	return false
}

// WriteThenWait writes b, all of it, and then waits until the socket has
// something to read, for a caller that reads the replies to b with
// ReadReply next (a closed loop's request and reply). Write and then
// ReadReply make a read that finds nothing before they wait (each write's
// replies are still on their way), a system call per exchange and, on a
// virtual machine, one of the dearest parts of it. WriteThenWait writes
// from inside the netpoller's read, after the netpoller has forgotten any
// readiness it saw before (RawConn.Read resets it), so every byte that
// arrives after the write wakes it and it can wait at once. A connection
// that some other goroutine reads (Start, a hub), one under TLS and one
// without a file descriptor write as Write does, without the wait. Its
// error is the write's, as Write's: a wait cut short (a deadline, the
// connection closed) is left to the read that follows.
func (c *Conn) WriteThenWait(b []byte) error {
	if c.raw == nil || c.tls != nil || c.started || c.member.Load() != nil || len(b) == 0 {
		return c.Write(b)
	}
	w := c.raw
	w.buf, w.n, w.wrote = b, 0, false
	_ = w.raw.Read(w.writeWait) // a wait cut short: the read that follows says why
	rest := w.buf
	w.buf = nil
	c.bytesOut.Add(uint64(w.n))
	if len(rest) > 0 {
		// A full socket buffer, an error, or nothing written (closed, a
		// deadline passed): Write finishes, or words the error as always.
		return c.Write(rest)
	}
	return nil
}

func (w *rawWriter) write(fd uintptr) bool {
	w.n, w.err = syscall.Write(int(fd), w.buf)
	return true
}

// sockWriteSome makes one non-blocking write attempt; a full socket buffer
// writes nothing and is not an error.
func (c *Conn) sockWriteSome(b []byte) (int, error) {
	if c.raw == nil {
		return c.nc.Write(b)
	}
	w := c.raw
	w.buf = b
	err := w.raw.Write(w.call)
	w.buf = nil
	if err != nil {
		return 0, err
	}
	switch {
	case w.err == syscall.EAGAIN || w.err == syscall.EINTR:
		return 0, nil
	case w.err != nil:
		return 0, w.err
	case w.n < 0:
		return 0, nil
	}
	return w.n, nil
}
