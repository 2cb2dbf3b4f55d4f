package embedded

import "container/heap"

// object is a value in the keyspace.
type object struct {
	kind   byte // 's' string, 'l' list, 'S' set, 'h' hash, 'z' sorted set, 'x' stream
	str    []byte
	list   *deque
	set    map[string]struct{}
	hash   map[string][]byte
	zset   *zset
	stream *stream
	// bytes is the length of what a collection holds: list elements, set
	// members, hash fields and values, sorted-set members.
	bytes int64
	// size is the object's footprint as last charged to Server.used.
	size int64
}

func (o *object) typeName() string {
	switch o.kind {
	case 's':
		return "string"
	case 'l':
		return "list"
	case 'S':
		return "set"
	case 'h':
		return "hash"
	case 'z':
		return "zset"
	}
	return "stream"
}

// The dataset's memory is estimated, as Redis's used_memory would count
// it, from what Go holds per key and per element: the bytes of the data
// plus a fixed overhead for headers, map entries and allocation rounding.
// The overheads are measured orders of magnitude, not exact.
const (
	keyOverhead  = 128 // map entry, object, key string header
	listSlot     = 32  // a slot of the list's ring (slice header, rounding)
	setEntry     = 48  // map entry and string header of a member
	hashEntry    = 64  // map entry, field and value headers
	zsetEntry    = 48  // score map entry
	zsetHeapSlot = 32  // heap entry
)

// keyCost is what a key itself costs, apart from its value.
func keyCost(key int) int64 { return keyOverhead + int64(key) }

// footprint is the object's estimated size, from what it keeps up to date.
func (o *object) footprint() int64 {
	switch o.kind {
	case 's':
		return int64(cap(o.str))
	case 'l':
		return o.bytes + listSlot*int64(len(o.list.buf))
	case 'S':
		return o.bytes + setEntry*int64(len(o.set))
	case 'h':
		return o.bytes + hashEntry*int64(len(o.hash))
	case 'z':
		return o.bytes + zsetEntry*int64(len(o.zset.score)) + zsetHeapSlot*int64(len(o.zset.h))
	}
	return 0
}

// recount computes the object's bytes from its contents (tests check the
// running count against it).
func (o *object) recount() int64 {
	var n int64
	switch o.kind {
	case 'l':
		for i := range o.list.len() {
			n += int64(len(o.list.at(i)))
		}
	case 'S':
		for m := range o.set {
			n += int64(len(m))
		}
	case 'h':
		for f, v := range o.hash {
			n += int64(len(f) + len(v))
		}
	case 'z':
		for m := range o.zset.score {
			n += int64(len(m))
		}
	}
	return n
}

// resized charges the change of o's footprint to the dataset. Call after
// every change to o.
func (c *client) resized(o *object) {
	n := o.footprint()
	c.srv.used += n - o.size
	o.size = n
}

// setKey stores o at key, replacing any value, and charges it.
func (c *client) setKey(key []byte, o *object) {
	db := c.keys()
	if old := db[string(key)]; old != nil {
		c.srv.used -= old.size
	} else {
		c.srv.used += keyCost(len(key))
	}
	o.size = o.footprint()
	c.srv.used += o.size
	db[string(key)] = o
}

// delKey removes key; it reports whether it was there.
func (c *client) delKey(key []byte) bool {
	db := c.keys()
	o := db[string(key)]
	if o == nil {
		return false
	}
	delete(db, string(key))
	c.srv.used -= keyCost(len(key)) + o.size
	return true
}

// flush empties database i.
func (s *Server) flush(i int) {
	for k, o := range s.dbs[i] {
		s.used -= keyCost(len(k)) + o.size
	}
	s.dbs[i] = map[string]*object{}
}

// deque is a ring buffer of values: O(1) push and pop at both ends and
// O(1) indexing, for lists.
type deque struct {
	buf        [][]byte
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	if d.size < len(d.buf) {
		return
	}
	nb := make([][]byte, max(8, 2*len(d.buf)))
	for i := range d.size {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushFront(v []byte) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = v
	d.size++
}

func (d *deque) pushBack(v []byte) {
	d.grow()
	d.buf[(d.head+d.size)%len(d.buf)] = v
	d.size++
}

func (d *deque) popFront() []byte {
	v := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return v
}

func (d *deque) popBack() []byte {
	i := (d.head + d.size - 1) % len(d.buf)
	v := d.buf[i]
	d.buf[i] = nil
	d.size--
	return v
}

func (d *deque) at(i int) []byte { return d.buf[(d.head+i)%len(d.buf)] }

// zset keeps scores by member and a min-heap with lazy deletion for
// ZPOPMIN: an updated member leaves a stale heap entry that pops skip, and
// the heap is rebuilt when stale entries outnumber the members.
type zset struct {
	score map[string]float64
	h     zheap
}

// zsetStaleSlack is how many stale heap entries a small sorted set may
// keep before its heap is rebuilt.
const zsetStaleSlack = 16

func newZset() *zset { return &zset{score: map[string]float64{}} }

func (z *zset) set(m string, sc float64) {
	z.score[m] = sc
	heap.Push(&z.h, zentry{sc, m})
	if len(z.h) > 2*len(z.score)+zsetStaleSlack {
		z.h = z.h[:0]
		for m, sc := range z.score {
			z.h = append(z.h, zentry{sc, m})
		}
		heap.Init(&z.h)
	}
}

func (z *zset) popMin() (string, float64) {
	for {
		e := heap.Pop(&z.h).(zentry)
		if sc, ok := z.score[e.member]; ok && sc == e.score {
			delete(z.score, e.member)
			return e.member, e.score
		}
	}
}

type zentry struct {
	score  float64
	member string
}

type zheap []zentry

func (h zheap) Len() int { return len(h) }
func (h zheap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].member < h[j].member
}
func (h zheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *zheap) Push(x any)   { *h = append(*h, x.(zentry)) }
func (h *zheap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = zentry{}
	*h = old[:len(old)-1]
	return e
}

// stream counts entries and hands out IDs; the embedded target does not
// keep entries (no XRANGE/XREAD).
type stream struct {
	n       int
	lastMs  int64
	lastSeq uint64
}
