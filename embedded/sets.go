package embedded

// Sets: SADD, SREM, SISMEMBER, SMEMBERS, SPOP.

func cmdSAdd(c *client, a [][]byte) {
	o, ok := c.create(a[1], 'S')
	if !ok {
		return
	}
	n := 0
	for _, m := range a[2:] {
		if _, there := o.set[string(m)]; !there {
			o.set[string(m)] = struct{}{}
			o.bytes += int64(len(m))
			n++
		}
	}
	c.resized(o)
	if n > 0 {
		c.modified(a[1])
	}
	c.integer(int64(n))
}

func cmdSRem(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 'S')
	if !ok {
		return
	}
	n := 0
	if o != nil {
		for _, m := range a[2:] {
			if _, there := o.set[string(m)]; there {
				delete(o.set, string(m))
				o.bytes -= int64(len(m))
				n++
			}
		}
		if n > 0 {
			c.modified(a[1])
		}
		c.settle(a[1], o)
	}
	c.integer(int64(n))
}

func cmdSIsMember(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'S'); ok {
		there := false
		if o != nil {
			_, there = o.set[string(a[2])]
		}
		c.boolean(there)
	}
}

func cmdSMembers(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'S'); ok {
		if o == nil {
			c.setHeader(0)
			return
		}
		c.setHeader(len(o.set))
		for m := range o.set {
			c.bulkString(m)
		}
	}
}

func cmdSPop(c *client, a [][]byte) {
	if len(a) > 3 {
		c.errorRaw(errSyntax)
		return
	}
	o, ok := c.lookup(a[1], 'S')
	if !ok {
		return
	}
	n, withCount := int64(1), len(a) == 3
	if withCount {
		if n, ok = c.countArg(a[2]); !ok {
			return
		}
	}
	if o == nil {
		if withCount {
			c.setHeader(0)
		} else {
			c.null()
		}
		return
	}
	if withCount {
		n = min(n, int64(len(o.set)))
		c.setHeader(int(n))
	}
	if n > 0 {
		c.modified(a[1])
	}
	for m := range o.set {
		if n == 0 {
			break
		}
		delete(o.set, m)
		o.bytes -= int64(len(m))
		c.bulkString(m)
		n--
	}
	c.settle(a[1], o)
}
