package conn

import (
	"fmt"
	"net"

	"github.com/pacer-load/pacer/internal/rxstamp"
)

// Times are a reply's two instants on the Now clock.
//
//	server writes ──> kernel receives (Arrival) ──> reader has the bytes (Read)
//	                                           └─ receive lag ─┘
type Times struct {
	// Arrival: when the reply's last bytes reached this machine's kernel
	// (receive timestamp of the last segment the read consumed); the read
	// instant where no timestamp was available.
	Arrival int64
	// Read: when the reader had the bytes (the clock reading right after
	// the read returned).
	Read int64
	// Last: nothing follows this reply in the reader's buffer, so the
	// next reply comes from another read. Replies of one read share their
	// instants: a handler that adds a per-read figure (receive lag) once
	// per read, weighted by its replies, adds it on Last (see ReadEnder
	// for a read that ends inside a reply).
	Last bool
}

// After returns t with Arrival no earlier than written, the clock reading
// taken before the request's write began: a genuine reply reaches the
// kernel after that, and only the conversion of a kernel timestamp
// (nanoseconds of error) could place it before. A zero Read (a broken
// clock) is left for the caller to count. For callers that match replies
// of ReadReply themselves; the reader goroutine and ReadReplyAfter apply it.
func (t Times) After(written int64) Times {
	if t.Read > 0 && t.Arrival < written {
		t.Arrival = written
	}
	return t
}

// Values of Options.ReceiveClock and of Conn.ReceiveClock.
const (
	// ReceiveKernel takes a reply's arrival from the kernel's receive
	// timestamp where the socket gives one (Linux TCP; not AF_UNIX
	// stream sockets, not net.Pipe).
	ReceiveKernel = "kernel"
	// ReceiveRead takes a reply's arrival at the read instant: the
	// reading goroutine's wake-up delay counts as the server's latency.
	ReceiveRead = "read"
)

func checkReceiveClock(s string) error {
	switch s {
	case "", ReceiveKernel, ReceiveRead:
		return nil
	}
	return fmt.Errorf("receive clock %q: want %q or %q", s, ReceiveKernel, ReceiveRead)
}

// stampedReader returns the Reader of nc and the socket reader under it
// that keeps kernel receive timestamps, nil when o.ReceiveClock is "read"
// or nc gives none (no file descriptor, not Linux).
func stampedReader(nc net.Conn, o Options) (*Reader, *rxstamp.Reader) {
	if o.ReceiveClock == ReceiveRead {
		return NewReader(nc, o.Now), nil
	}
	s := rxstamp.New(nc, o.Now)
	if s == nil {
		return NewReader(nc, o.Now), nil
	}
	rd := NewReader(s, o.Now)
	rd.stamps = s
	return rd, s
}

// ReceiveClock returns ReceiveKernel once any read on the connection (its
// handshake's included) carried a usable kernel receive timestamp, else
// ReceiveRead: whether its replies' Arrival is the kernel's instant or the
// read's. Safe from any goroutine.
func (c *Conn) ReceiveClock() string {
	if c.rd.kernel.Load() {
		return ReceiveKernel
	}
	return ReceiveRead
}
