package conn

import "errors"

// A started connection read on a hub: its replies are handed to its
// handler on the hub's goroutine, as its own reader goroutine would hand
// them (dispatch), so a process with many connections wakes one
// goroutine per burst of replies rather than one per connection.

// hubMaxHeld is the most of one reply a hub holds in a connection's
// buffer: a longer reply (or one whose end cannot be told) is read by a
// goroutine of the connection's own, which need not hold it whole.
const hubMaxHeld = 256 << 10

// StartOn is Start with the replies read on hub h's goroutine instead of a
// goroutine of the connection's own, where the connection can be a hub's
// member (see hub.go); otherwise, or with a nil hub, it is Start. Close
// waits for the hub to stop reading it, as it waits for a reader
// goroutine.
func (c *Conn) StartOn(h *Hub, handler Handler) {
	if h == nil {
		c.Start(handler)
		return
	}
	c.h = handler
	if re, ok := handler.(ReadEnder); ok {
		c.rd.beforeFill = re.ReadEnded
	}
	if _, err := h.join(c, c.hubRead, true); err != nil {
		c.rd.beforeFill = nil
		c.Start(handler)
		return
	}
	c.started = true
}

// OnHub reports whether a hub reads the connection (or read it to its
// end), rather than a goroutine of its own.
func (c *Conn) OnHub() bool { return c.member.Load() != nil }

// hubRead reads what the socket holds and dispatches its whole replies,
// on the hub's goroutine, without waiting: false once the connection
// ended (the hub then ends its reading: ReadEnded, Done) or its reading
// moved to a goroutine of its own.
func (c *Conn) hubRead() bool {
	for {
		err := c.rd.fill()
		if err != nil && !errors.Is(err, ErrWouldBlock) {
			c.fail(err)
			return false
		}
		held := c.Held()
		for ; held == HeldWhole; held = c.Held() {
			r, err := c.rd.Next()
			if err != nil {
				c.fail(err)
				return false
			}
			if !c.dispatch(r) {
				return false
			}
		}
		switch {
		case held == HeldUnframed || c.rd.Buffered() >= hubMaxHeld:
			if m := c.member.Load(); m != nil && m.h.leave(m) {
				go c.readLoop()
			}
			return false
		case err != nil: // the socket is empty; fill ended the last read
			return true
		case !c.rd.full:
			// The socket is likely empty; if not, the hub calls again.
			// Nothing stays pending while the hub waits.
			if c.rd.beforeFill != nil {
				c.rd.beforeFill()
			}
			return true
		}
	}
}

// readEnded ends the hub's reading of the connection: what its handler
// keeps pending per read is recorded, and Done closes.
func (c *Conn) readEnded() {
	if re, ok := c.h.(ReadEnder); ok {
		re.ReadEnded()
	}
	close(c.done)
}
