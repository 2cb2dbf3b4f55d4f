//go:build !unix

package conn

import (
	"io"
	"net"
)

func newSocketReader(nc net.Conn) io.Reader { return nc }
