//go:build !(linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le))

package rxstamp

import (
	"errors"
	"net"
	"syscall"
)

// Reader is a socket reader with receive timestamps; this platform has
// none, so New returns nil.
type Reader struct{}

// New returns nil: this platform gives no receive timestamps.
func New(nc net.Conn, now func() int64) *Reader { return nil }

// Enable reports false: this platform gives no receive timestamps.
func Enable(sc syscall.Conn) bool { return false }

// Read is never called: New returns no Reader here.
func (r *Reader) Read(b []byte) (int, error) { return 0, errors.ErrUnsupported }

// Arrival returns 0: no read carries a timestamp here.
func (r *Reader) Arrival() int64 { return 0 }

// TryRead is never called: New returns no Reader here.
func (r *Reader) TryRead(b []byte) (int, error) { return 0, errors.ErrUnsupported }

// Control is never called: New returns no Reader here.
func (r *Reader) Control(f func(fd uintptr)) error { return errors.ErrUnsupported }
