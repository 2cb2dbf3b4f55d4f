package embedded

// The keyspace: what a key holds, looking it up and creating it by kind, and
// the commands on keys whatever they hold (DEL, EXISTS, TYPE, KEYS, SCAN,
// FLUSHALL and the length commands).

import (
	"path"
	"sort"
)

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

// len is how much the value holds: a string's bytes, a list's elements,
// the members of a set or a sorted set, a hash's fields, a stream's
// entries.
func (o *object) len() int {
	switch o.kind {
	case 's':
		return len(o.str)
	case 'l':
		return o.list.len()
	case 'S':
		return len(o.set)
	case 'h':
		return len(o.hash)
	case 'z':
		return len(o.zset.score)
	}
	return o.stream.n
}

func (c *client) keys() map[string]*object { return c.srv.dbs[c.db] }

// lookup returns the key's object if it has kind, reporting WRONGTYPE
// (written to the client) when it holds another kind.
func (c *client) lookup(key []byte, kind byte) (*object, bool) {
	o := c.keys()[string(key)]
	if o != nil && o.kind != kind {
		c.errorRaw(errWrongType)
		return nil, false
	}
	return o, true
}

// create returns the key's object of kind, creating it when missing.
func (c *client) create(key []byte, kind byte) (*object, bool) {
	o, ok := c.lookup(key, kind)
	if !ok {
		return nil, false
	}
	if o == nil {
		o = &object{kind: kind}
		switch kind {
		case 'l':
			o.list = &deque{}
		case 'S':
			o.set = map[string]struct{}{}
		case 'h':
			o.hash = map[string][]byte{}
		case 'z':
			o.zset = newZset()
		case 'x':
			o.stream = &stream{}
		}
		c.setKey(key, o)
	}
	return o, true
}

// settle charges the change of a collection's size and deletes its key
// when it is left empty, as Redis does. Call after every change that may
// remove elements.
func (c *client) settle(key []byte, o *object) {
	c.resized(o)
	if o.len() == 0 {
		c.delKey(key)
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func cmdDel(c *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		if c.delKey(k) {
			n++
		}
	}
	c.integer(int64(n))
}

func cmdExists(c *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		if _, ok := c.keys()[string(k)]; ok {
			n++
		}
	}
	c.integer(int64(n))
}

func cmdType(c *client, a [][]byte) {
	if o := c.keys()[string(a[1])]; o != nil {
		c.simple(o.typeName())
	} else {
		c.simple("none")
	}
}

// cmdLen is the command that answers how much a key of kind holds, 0 for a
// missing key: STRLEN, LLEN, SCARD, HLEN, ZCARD and XLEN.
func cmdLen(kind byte) func(*client, [][]byte) {
	return func(c *client, a [][]byte) {
		if o, ok := c.lookup(a[1], kind); ok {
			n := 0
			if o != nil {
				n = o.len()
			}
			c.integer(int64(n))
		}
	}
}

func cmdFlushAll(c *client, _ [][]byte) {
	for i := range c.srv.dbs {
		c.srv.flush(i)
	}
	c.simple("OK")
	c.flushed()
}

func cmdScan(c *client, a [][]byte) {
	// One pass: every matching key, cursor 0.
	pattern := []byte("*")
	for i := 2; i+1 < len(a); i += 2 {
		if is(a[i], "MATCH") {
			pattern = a[i+1]
		}
	}
	c.array(2)
	c.bulkString("0")
	c.keyList(pattern)
}

func (c *client) keyList(pattern []byte) {
	var keys []string
	p := string(pattern)
	for k := range c.keys() {
		if p == "*" {
			keys = append(keys, k)
		} else if ok, _ := path.Match(p, k); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	c.array(len(keys))
	for _, k := range keys {
		c.bulkString(k)
	}
}
