//go:build !(linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le))

package conn

import "errors"

// Hub: see hub.go. This platform has none.
type Hub struct{}

// NewHub returns errors.ErrUnsupported: this platform has no hub.
func NewHub() (*Hub, error) { return nil, errors.ErrUnsupported }

// Join returns errors.ErrUnsupported.
func (h *Hub) Join(c *Conn, ready func() bool) error { return errors.ErrUnsupported }

// member is a hub's member; none here.
type member struct{ h *Hub }

func (h *Hub) join(c *Conn, ready func() bool, reads bool) (*member, error) {
	return nil, errors.ErrUnsupported
}

func (h *Hub) leave(m *member) bool     { return false }
func (m *member) detach(wake bool) bool { return false }

// Leave does nothing.
func (h *Hub) Leave(c *Conn) {}

// Start does nothing.
func (h *Hub) Start() {}

// Close returns nil.
func (h *Hub) Close() error { return nil }
