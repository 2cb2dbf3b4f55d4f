//go:build unix

package conn

import "syscall"

// writeSome makes one non-blocking write attempt; a full socket buffer
// writes nothing and is not an error.
func (c *Conn) writeSome(b []byte) (int, error) {
	if c.raw == nil {
		return c.nc.Write(b)
	}
	var n int
	var werr error
	if err := c.raw.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true
	}); err != nil {
		return 0, err
	}
	switch {
	case werr == syscall.EAGAIN || werr == syscall.EINTR:
		return 0, nil
	case werr != nil:
		return 0, werr
	case n < 0:
		return 0, nil
	}
	return n, nil
}
