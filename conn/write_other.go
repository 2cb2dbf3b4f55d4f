//go:build !unix

package conn

import "syscall"

type rawWriter struct{}

func newRawWriter(syscall.RawConn) *rawWriter { return nil }

func (c *Conn) sockWriteSome(b []byte) (int, error) { return c.nc.Write(b) }

// WriteThenWait writes b as Write does (see write_unix.go): the read that
// follows waits for the replies.
func (c *Conn) WriteThenWait(b []byte) error { return c.Write(b) }
