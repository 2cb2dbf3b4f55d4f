package conn

import (
	"sync/atomic"
	"unsafe"
)

// The FIFO is built of chunks of chunkLen entries (4 KiB each, a page),
// allocated as the number of commands in flight first needs them, so a
// large --max-inflight costs memory only when it is used, and thousands of
// connections with a few commands in flight each cost a page each.
const (
	chunkShift = 7
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
)

// preChunks is how many chunks a FIFO allocates and touches up front: one.
// A connection whose commands in flight pass it takes a chunk more (a
// page) at each new peak of chunkLen, on the writer's goroutine; once the
// peak is reached the chunks are reused, so the steady state allocates
// nothing. Making the default MaxInflight's worth up front (352 KiB) took
// 3 GB resident at -c 9000 for a run with one command in flight per
// connection.
const preChunks = 1

type chunk [chunkLen]Entry

// ring is a single-producer single-consumer FIFO of entries:
//
//	head ≤ pub ≤ tail
//	[head, pub)  written, awaiting replies (the reader's side)
//	[pub, tail)  queued, not yet fully written (the writer's side)
//
// Entry i lives in the chunk at dir[(i>>chunkShift) & dirMask]. Only the
// writer changes dir: before it publishes tail past an entry, the entry's
// chunk is in place. A chunk that holds no live entry (all its indices
// below head) may be moved by the writer to the position it needs next, so
// memory follows the peak number of commands in flight, not the number
// sent. The reader only touches entries below pub, which the writer
// published after placing their chunk.
//
//	chunk units:  … reclaim … H ………… T …
//	              free to move │ live │ being filled
type ring struct {
	dir     []atomic.Pointer[chunk]
	dirMask uint64
	limit   int

	// Writer-owned: chunks detached from positions behind head, and the
	// first chunk unit not yet examined for detaching.
	spare   []*chunk
	reclaim uint64

	head atomic.Uint64
	_    [56]byte // keep the reader's index off the writer's cache line
	pub  atomic.Uint64
	tail atomic.Uint64
}

func (r *ring) init(limit int) {
	size := chunkLen
	for size < limit {
		size <<= 1
	}
	n := size >> chunkShift
	r.dir = make([]atomic.Pointer[chunk], n)
	r.dirMask = uint64(n - 1)
	r.limit = limit
	// At most every chunk can be spare at once; room for the ones made up
	// front keeps detaching them from allocating.
	r.spare = make([]*chunk, 0, min(n, preChunks))
	for i := range min(n, preChunks) {
		ch := new(chunk)
		// Touch every page now: a page fault on first use would otherwise
		// land in the middle of a measured run.
		for j := 0; j < chunkLen; j += pageEntries {
			ch[j].end = 0
		}
		r.dir[i].Store(ch)
	}
}

// pageEntries is how many entries fit in a 4 KiB page.
const pageEntries = 4096 / int(unsafe.Sizeof(Entry{}))

func (r *ring) capacity() int { return r.limit }

// slot returns entry i. The reader may call it for i in [head, pub), the
// writer for i in [head, tail]; another goroutine may get nil for an entry
// that is no longer live.
func (r *ring) slot(i uint64) *Entry {
	ch := r.dir[(i>>chunkShift)&r.dirMask].Load()
	if ch == nil {
		return nil
	}
	return &ch[i&chunkMask]
}

// writable returns entry t (= tail) for the writer, placing a chunk at its
// position first when there is none.
func (r *ring) writable(t uint64) *Entry {
	p := &r.dir[(t>>chunkShift)&r.dirMask]
	ch := p.Load()
	if ch == nil {
		ch = r.take(t >> chunkShift)
		p.Store(ch)
	}
	return &ch[t&chunkMask]
}

// take returns a chunk for unit u: one detached from a position whose
// entries the reader is done with, or a new one.
func (r *ring) take(u uint64) *chunk {
	n := r.dirMask + 1
	// Units below u+1-n share their position with a unit the writer has
	// entered since: that position's chunk belongs to the later unit.
	if u+1 > n && r.reclaim < u+1-n {
		r.reclaim = u + 1 - n
	}
	for h := r.head.Load() >> chunkShift; r.reclaim < h; r.reclaim++ {
		p := &r.dir[r.reclaim&r.dirMask]
		if ch := p.Load(); ch != nil {
			p.Store(nil)
			r.spare = append(r.spare, ch)
		}
	}
	if k := len(r.spare); k > 0 {
		ch := r.spare[k-1]
		r.spare = r.spare[:k-1]
		return ch
	}
	return new(chunk)
}

// chunks returns how many chunks the ring holds, placed or spare (tests).
func (r *ring) chunks() int {
	k := len(r.spare)
	for i := range r.dir {
		if r.dir[i].Load() != nil {
			k++
		}
	}
	return k
}
