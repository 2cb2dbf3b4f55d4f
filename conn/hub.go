package conn

import (
	"errors"

	"github.com/pacer-load/pacer/internal/rxstamp"
)

// A Hub reads many connections on one goroutine. A subscriber connection
// of its own goroutine costs, per burst of deliveries, a goroutine wake,
// a read that finds nothing (how the netpoller learns it must wait), and
// with ten of them readied at once the Go scheduler wakes a second thread
// to share them, which then parks again: context switches that cost tens
// of µs each on a virtual machine, more than the deliveries themselves.
// The hub's members wait in one epoll instance, itself waited on in the
// netpoller: one goroutine wakes per burst and reads each ready socket
// once.
//
// A member is a connection with a kernel-stamped socket and no reader
// goroutine (ReadPush's kind): not TLS, whose records the hub cannot
// read without waiting. Its ready function reads with ReadQueued and
// ReadPush, which never wait inside a hub.

// ErrWouldBlock is ReadQueued's answer when the socket holds nothing.
var ErrWouldBlock = rxstamp.ErrWouldBlock

// ReadQueued reads what the socket of a hub's member holds, without
// waiting: ErrWouldBlock when it holds nothing. Any other error ends the
// connection.
func (c *Conn) ReadQueued() error {
	err := c.rd.fill()
	if err != nil && !errors.Is(err, ErrWouldBlock) {
		c.fail(err)
	}
	return err
}

// Held says what the connection holds of its next message: when whole,
// ReadPush returns it without reading the socket; when unframed, only a
// reader that may wait can read it (Hub.Leave first).
func (c *Conn) Held() Held { return frame(c.rd.buf[c.rd.r:c.rd.w]) }

// LastReadFull reports whether the last read filled the buffer: the
// socket may hold more.
func (c *Conn) LastReadFull() bool { return c.rd.full }

// hubbable reports whether c can be a hub's member: its reader reads the
// stamped socket itself (not TLS records over it), and no goroutine of
// its own reads it.
func (c *Conn) hubbable() bool {
	return c.stamps != nil && c.rd.rd == c.stamps && !c.started
}
