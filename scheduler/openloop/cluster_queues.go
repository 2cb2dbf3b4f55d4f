package openloop

import (
	"sync"
	"sync/atomic"

	"github.com/pacer-load/pacer/cluster"
)

// The three queues of an open cluster run: redirects from the readers to
// the pacer, each connection's store of the commands in flight (for a
// resend), and each node's queue of requests waiting for room.

// redirect is a reply handed from a reader to the pacer: the request
// (lane, its entry's sequence number on that connection) and
// what the cluster said.
type redirect struct {
	lane     int
	seq      uint64
	intended int64
	kind     uint32
	next     cluster.Next // Moved, Ask, Retry (CLUSTERDOWN, TRYAGAIN) or Broken
	hslot    uint16
	addr     string
	code     string
	bad      string // a MOVED or ASK that cannot be followed: the protocol error naming it
}

// redirectQueue carries redirects from the readers to the pacer.
type redirectQueue struct {
	n     atomic.Int64
	mu    sync.Mutex
	items []redirect
	spare []redirect
}

func (q *redirectQueue) push(r redirect) {
	q.mu.Lock()
	q.items = append(q.items, r)
	q.n.Add(1)
	q.mu.Unlock()
}

// take returns the queued redirects; the slice is valid until the next take.
func (q *redirectQueue) take() []redirect {
	if q.n.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	out := q.items
	q.items, q.spare = q.spare[:0], out
	q.n.Add(-int64(len(out)))
	q.mu.Unlock()
	return out
}

// cmdStore keeps the bytes of a connection's commands from their queueing
// until their reply, by sequence number on the connection, so a redirected
// one can be resent. It holds at most limit bytes: a command queued past
// that is not kept (its redirect would be an error). Pacer-owned.
type cmdStore struct {
	limit       int
	buf         []byte
	base        uint64 // absolute offset of buf[0]
	ends        []uint64
	tries       []uint8
	first, next uint64 // sequence numbers held: [first, next)
	start       uint64 // absolute offset where first begins
}

func (s *cmdStore) reset() {
	s.buf, s.base, s.first, s.next, s.start = s.buf[:0], 0, 0, 0, 0
}

func (s *cmdStore) push(cmd []byte, tries uint8) {
	if int(s.next-s.first) == len(s.ends) {
		n := max(2*len(s.ends), 64)
		ends, tr := make([]uint64, n), make([]uint8, n)
		for q := s.first; q < s.next; q++ {
			ends[q%uint64(n)], tr[q%uint64(n)] = s.ends[q%uint64(len(s.ends))], s.tries[q%uint64(len(s.tries))]
		}
		s.ends, s.tries = ends, tr
	}
	if s.limit > 0 && len(s.buf)+len(cmd) > s.limit && s.next > s.first {
		tries = notHeld
	} else {
		s.buf = append(s.buf, cmd...)
	}
	i := s.next % uint64(len(s.ends))
	s.ends[i], s.tries[i] = s.base+uint64(len(s.buf)), tries
	s.next++
}

// notHeld marks a command the store did not keep.
const notHeld = 0xFF

// get returns the bytes and tries of sequence number q (nil if not held).
func (s *cmdStore) get(q uint64) ([]byte, uint8) {
	if q < s.first || q >= s.next {
		return nil, 0
	}
	from := s.start
	if q > s.first {
		from = s.ends[(q-1)%uint64(len(s.ends))]
	}
	to := s.ends[q%uint64(len(s.ends))]
	tries := s.tries[q%uint64(len(s.tries))]
	if tries == notHeld {
		return nil, 0
	}
	return s.buf[from-s.base : to-s.base], tries
}

// release forgets the commands before sequence number q.
func (s *cmdStore) release(q uint64) {
	if q <= s.first {
		return
	}
	q = min(q, s.next)
	s.start = s.ends[(q-1)%uint64(len(s.ends))]
	s.first = q
	if s.first == s.next {
		s.buf, s.base = s.buf[:0], s.start
		return
	}
	if off := s.start - s.base; off > uint64(len(s.buf))/2 && off > 4096 {
		n := copy(s.buf, s.buf[off:])
		s.buf, s.base = s.buf[:n], s.start
	}
}

// waitItem is a request waiting for room on its node.
type waitItem struct {
	intended  int64
	notBefore int64
	kind      uint32
	tries     uint8
	ask       bool
	off, n    int
}

// waitQueue is a node's FIFO of requests waiting for room. Pacer-owned.
type waitQueue struct {
	items []waitItem
	head  int
	buf   []byte
}

func (q *waitQueue) len() int { return len(q.items) - q.head }

func (q *waitQueue) full(n int) bool {
	return q.len() >= maxWaitItems || len(q.buf)+n > maxWaitBytes && q.len() > 0
}

func (q *waitQueue) push(it waitItem, cmd []byte) {
	if q.head > 0 && q.head >= len(q.items)/2 {
		q.compact()
	}
	it.off, it.n = len(q.buf), len(cmd)
	q.buf = append(q.buf, cmd...)
	q.items = append(q.items, it)
}

func (q *waitQueue) front() (*waitItem, []byte) {
	it := &q.items[q.head]
	return it, q.buf[it.off : it.off+it.n]
}

func (q *waitQueue) pop() {
	q.head++
	if q.head == len(q.items) {
		q.items, q.head, q.buf = q.items[:0], 0, q.buf[:0]
	}
}

func (q *waitQueue) compact() {
	rest := q.items[q.head:]
	base := rest[0].off
	n := copy(q.buf, q.buf[base:])
	q.buf = q.buf[:n]
	m := copy(q.items, rest)
	q.items = q.items[:m]
	for i := range q.items {
		q.items[i].off -= base
	}
	q.head = 0
}
