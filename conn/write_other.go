//go:build !unix

package conn

func (c *Conn) writeSome(b []byte) (int, error) { return c.nc.Write(b) }
