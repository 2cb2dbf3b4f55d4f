//go:build !unix

package conn

import "syscall"

type rawWriter struct{}

func newRawWriter(syscall.RawConn) *rawWriter { return nil }

func (c *Conn) sockWriteSome(b []byte) (int, error) { return c.nc.Write(b) }
