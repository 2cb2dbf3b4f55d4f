package conn

// How a connection ends: the first failure is kept as its error, a failed
// write leaves the reader to read what arrived, Close waits for the
// reader, and what was left unanswered or unwritten is walked after it.

import "time"

// record keeps err as why the connection ended, unless it keeps one
// already: an error after Close is not a failure.
func (c *Conn) record(err error) {
	c.errMu.Lock()
	if c.err == nil && !c.closing.Load() {
		c.err = err
	}
	c.errMu.Unlock()
}

// fail records the first error, marks the connection dead and closes the
// socket so both sides stop.
func (c *Conn) fail(err error) {
	c.record(err)
	c.dead.Store(true)
	c.closeSocket()
}

// closeSocket closes the socket, out of its hub first when a hub reads it.
func (c *Conn) closeSocket() {
	if m := c.member.Load(); m != nil {
		m.detach(true)
	}
	c.nc.Close()
}

// failWrite is fail for a write. A server that answers and then hangs up
// leaves its last replies in the socket's receive queue, and the write
// that meets its reset can come before the reader has read them: closing
// the socket then would discard replies that arrived, and count their
// requests as errors. So the connection is dead to the writer at once,
// but the socket stays open for the reader, which reads what arrived and
// then ends on the reset or end of stream, and closes it. A read side
// that does not end is closed after writeFailDrain.
func (c *Conn) failWrite(err error) {
	if !c.started {
		c.fail(err) // no reader: nothing to wait for
		return
	}
	if c.writeFailed.Load() {
		return // the writer is the only caller: nothing races this
	}
	c.record(err)
	c.drainLimit = time.AfterFunc(writeFailDrain, c.closeSocket)
	c.writeFailed.Store(true) // after drainLimit, which Close then sees
	c.dead.Store(true)
}

// writeFailDrain bounds how long a connection whose write failed waits for
// its reader (failWrite). After a reset the reader ends as soon as it has
// read what arrived; the bound is for a read side that stays open.
const writeFailDrain = 500 * time.Millisecond

// Draining reports whether a write failed and the reader is still reading
// the replies that arrived before: Close would wait for it.
func (c *Conn) Draining() bool {
	if !c.writeFailed.Load() {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Err returns why the connection failed, or nil if it is alive or was
// closed with Close.
func (c *Conn) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Dead reports whether the connection has failed or been closed.
func (c *Conn) Dead() bool { return c.dead.Load() }

// Expire ends the connection because a request timed out: Err becomes
// ErrTimeout, so the unanswered requests count as timeouts.
func (c *Conn) Expire() { c.fail(ErrTimeout) }

func (c *Conn) deadErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// Close closes the connection and waits for its reader goroutine; after a
// failed write it first lets the reader read what arrived. It is
// idempotent. After Close, Unanswered and Unwritten describe what was left.
func (c *Conn) Close() {
	c.closing.Store(true)
	if c.writeFailed.Load() {
		<-c.done // the reader reads what arrived (failWrite bounds it)
		c.drainLimit.Stop()
	}
	c.dead.Store(true)
	c.closeSocket()
	if c.started {
		<-c.done
	}
}

// Done is closed when the reader has stopped: its goroutine exited, or
// its hub read it for the last time.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Unanswered calls fn for every command that was written but not answered.
// Call it only after Close.
func (c *Conn) Unanswered(fn func(e *Entry)) {
	for i, end := c.ring.head.Load(), c.ring.pub.Load(); i < end; i++ {
		fn(c.ring.slot(i))
	}
}

// Unsent calls fn for every command queued but never fully written. Call
// it only after Close.
func (c *Conn) Unsent(fn func(e *Entry)) {
	for i, end := c.ring.pub.Load(), c.ring.tail.Load(); i < end; i++ {
		fn(c.ring.slot(i))
	}
}

// Unwritten returns the commands queued but never fully written. Call it
// only after Close.
func (c *Conn) Unwritten() int { return int(c.ring.tail.Load() - c.ring.pub.Load()) }
