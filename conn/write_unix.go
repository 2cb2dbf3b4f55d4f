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
}

func newRawWriter(raw syscall.RawConn) *rawWriter {
	w := &rawWriter{raw: raw}
	w.call = w.write
	return w
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
