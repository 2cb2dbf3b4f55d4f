package embedded

// Hashes: HSET, HMSET, HGET, HGETALL.

import "strings"

func cmdHSet(c *client, a [][]byte) {
	if len(a)%2 != 0 {
		c.wrongArgs(strings.ToLower(string(a[0])))
		return
	}
	o, ok := c.create(a[1], 'h')
	if !ok {
		return
	}
	n := 0
	for i := 2; i < len(a); i += 2 {
		if old, there := o.hash[string(a[i])]; there {
			o.bytes -= int64(len(a[i]) + len(old))
		} else {
			n++
		}
		o.hash[string(a[i])] = clone(a[i+1])
		o.bytes += int64(len(a[i]) + len(a[i+1]))
	}
	c.resized(o)
	c.modified(a[1])
	if is(a[0], "HMSET") {
		c.simple("OK")
	} else {
		c.integer(int64(n))
	}
}

func cmdHGet(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'h'); ok {
		var v []byte
		there := false
		if o != nil {
			v, there = o.hash[string(a[2])]
		}
		if there {
			c.bulk(v)
		} else {
			c.null()
		}
	}
}

func cmdHGetAll(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'h'); ok {
		if o == nil {
			c.mapHeader(0)
			return
		}
		c.mapHeader(len(o.hash))
		for k, v := range o.hash {
			c.bulkString(k)
			c.bulk(v)
		}
	}
}
