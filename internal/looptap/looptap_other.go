//go:build !linux

package looptap

// Tap is a running packet socket on lo (Linux only).
type Tap struct{}

// Start fails: packet sockets are Linux's.
func Start(Config) (*Tap, error) { return nil, ErrUnsupported }

// Stop returns nothing.
func (t *Tap) Stop() Stats { return Stats{} }
