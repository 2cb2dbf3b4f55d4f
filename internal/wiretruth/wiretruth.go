// Package wiretruth dates pacer pubsub's deliveries independently of
// pacer, on the wire: a tap on the loopback interface (internal/looptap)
// sees the segments a server sends to every subscriber, and each delivery
// found in a connection's stream (RESP2 message arrays whose payload
// carries pacer's header) is dated by the kernel's timestamp of the
// segment that carried its last byte, from the intended instant in its
// payload. The truth test of delivery latency and bench/wire use it.
package wiretruth

import (
	"bytes"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/looptap"
	"github.com/pacer-load/pacer/messages"
)

// Wire is a running tap's account of the deliveries.
type Wire struct {
	tap   *looptap.Tap
	mu    sync.Mutex
	flows map[uint16][]byte
	h     *hdrhistogram.Histogram
}

// Start taps the segments the server on port sends (looptap.ErrUnsupported
// without Linux and CAP_NET_RAW).
func Start(port int) (*Wire, error) {
	w := &Wire{flows: map[uint16][]byte{}, h: histo.New()}
	tap, err := looptap.Start(looptap.Config{ServerPort: uint16(port), Now: clock.Now, OnSegment: w.segment})
	if err != nil {
		return nil, err
	}
	w.tap = tap
	return w, nil
}

// segment adds a segment to its connection's stream and dates the
// deliveries it completes. Bytes that cannot begin a delivery (replies,
// the publisher's integers) are dropped up to the next array.
func (w *Wire) segment(s looptap.Segment) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := append(w.flows[s.Port], s.Payload...)
	for len(b) > 0 {
		if b[0] != '*' {
			i := bytes.IndexByte(b, '*')
			if i < 0 {
				b = b[:0]
				break
			}
			b = b[i:]
		}
		msg, rest, ok := NextMessage(b)
		if !ok {
			if len(b) > 1<<20 { // not a delivery after all
				b = b[1:]
				continue
			}
			break
		}
		if h, ok := messages.ParseHeader(msg); ok {
			_ = w.h.RecordValue(max(s.At-h.Intended, 0))
		}
		b = rest
	}
	w.flows[s.Port] = append(w.flows[s.Port][:0], b...)
}

// Stop ends the tap and returns the deliveries' latencies (ns, from the
// intended instant) and what the tap saw.
func (w *Wire) Stop() (*hdrhistogram.Histogram, looptap.Stats) {
	st := w.tap.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.h, st
}

// NextMessage cuts the first RESP2 array of three elements off b and
// returns its last bulk string (a delivery's payload; a subscription's
// count is an integer, returned empty); ok is false while it is
// incomplete. It allocates nothing.
func NextMessage(b []byte) (payload, rest []byte, ok bool) {
	// line returns the number after a line's type byte and the rest.
	line := func(b []byte) (n int, kind byte, rest []byte, ok bool) {
		i := bytes.IndexByte(b, '\n')
		if i < 2 || b[i-1] != '\r' {
			return 0, 0, nil, false
		}
		for _, c := range b[1 : i-1] {
			n = n*10 + int(c-'0')
		}
		return n, b[0], b[i+1:], true
	}
	n, kind, b, ok := line(b)
	if !ok || kind != '*' || n != 3 {
		return nil, nil, false
	}
	for i := range 3 {
		l, kind, r, ok := line(b)
		if !ok {
			return nil, nil, false
		}
		if kind == ':' {
			return nil, r, true
		}
		if len(r) < l+2 {
			return nil, nil, false
		}
		if i == 2 {
			return r[:l], r[l+2:], true
		}
		b = r[l+2:]
	}
	return nil, nil, false
}
