package embedded

// The dataset's memory estimate (INFO used_memory, Config.MaxMemory): every
// change to a key is charged here.

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
	case 'x':
		return o.bytes // entries, each with its overhead (entryBytes)
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
	case 'x':
		for _, e := range o.stream.live() {
			n += entryBytes(e)
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

// setKey stores o at key, replacing any value, and charges it. Like
// delKey, it signals the change to client-side caching (tracking.go);
// commands that change a value in place call modified themselves.
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
	c.modified(key)
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
	c.modified(key)
	return true
}

// flush empties database i.
func (s *Server) flush(i int) {
	for k, o := range s.dbs[i] {
		s.used -= keyCost(len(k)) + o.size
	}
	s.dbs[i] = map[string]*object{}
}
