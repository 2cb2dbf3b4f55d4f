// Package looptap watches the TCP segments a server on the loopback
// interface sends, from outside the connections that receive them: a
// packet socket on lo (AF_PACKET, which needs CAP_NET_RAW) sees each
// segment as it enters the receive path, with the kernel's timestamp of
// that moment, and hands its payload, in stream order per connection, to
// the caller. Truth tests use it as an independent reader of the very
// bytes pacer's connections read: it parses them itself and dates them by
// the segment that carried them, without pacer's reader, its buffers or
// its goroutines.
//
// Only for tests and measurements on Linux; Start fails elsewhere, and
// without the capability.
package looptap

import (
	"errors"
	"time"
)

// ErrUnsupported is Start's error where packet sockets cannot be opened.
var ErrUnsupported = errors.New("looptap: packet sockets on loopback need Linux and CAP_NET_RAW")

// Segment is a payload the server sent to one connection: Port is the
// receiving side's port, Seq the payload's place in that connection's
// stream (bytes since the first segment seen), At the kernel's receive
// timestamp on the clock of Config.Now.
type Segment struct {
	Port    uint16
	Seq     uint64
	Payload []byte
	At      int64
}

// Config configures a tap.
type Config struct {
	// ServerPort is the server's TCP port: only its segments to clients
	// are passed on.
	ServerPort uint16
	// Now is the monotonic clock the timestamps are converted to.
	Now func() int64
	// OnSegment receives each segment's payload in stream order per
	// connection, from the tap's goroutine; the payload is valid during
	// the call only.
	OnSegment func(Segment)
	// Poll bounds how long Stop waits for the reading goroutine (default
	// 50 ms).
	Poll time.Duration
}

// Stats are what a tap saw.
type Stats struct {
	// Segments passed on; Gaps counts connections' streams that jumped
	// (a segment the tap missed: its socket overflowed), Retransmits the
	// segments seen again; Dropped is the kernel's count of packets the
	// tap's socket lost.
	Segments, Gaps, Retransmits uint64
	Dropped                     uint64
	// Packets counts what the tap read from its socket: Segments and
	// what the kernel's filter let through besides (the filter keeps it
	// near Segments).
	Packets uint64
}
