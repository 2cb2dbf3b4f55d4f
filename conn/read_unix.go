//go:build unix

package conn

import (
	"io"
	"net"
	"syscall"
)

// fdReader reads a socket through its file descriptor and skips the read
// that would only say EAGAIN: after a short read the socket is known to be
// empty, so it goes straight to waiting for readability (the runtime's
// edge-triggered poller reports any byte that arrives after that read).
// That saves one syscall per reply batch compared with net.Conn.Read.
type fdReader struct {
	raw     syscall.RawConn
	drained bool
}

func newSocketReader(nc net.Conn) io.Reader {
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			return &fdReader{raw: raw}
		}
	}
	return nc
}

func (r *fdReader) Read(p []byte) (int, error) {
	var n int
	var err error
	skip := r.drained
	rerr := r.raw.Read(func(fd uintptr) bool {
		if skip {
			skip = false
			return false // wait for readability first
		}
		for {
			n, err = syscall.Read(int(fd), p)
			if err != syscall.EINTR {
				break
			}
		}
		return err != syscall.EAGAIN
	})
	switch {
	case rerr != nil:
		return 0, rerr
	case err != nil:
		return 0, err
	case n <= 0:
		return 0, io.EOF
	}
	r.drained = n < len(p)
	return n, nil
}
