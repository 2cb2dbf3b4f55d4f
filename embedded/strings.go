package embedded

// Strings: GET, SET, GETSET, MSET, MGET, INCR, DECR, INCRBY, DECRBY, APPEND.

import (
	"math"
	"strconv"
)

func cmdGet(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 's'); ok {
		c.value(o)
	}
}

// value answers a string's value, or null for a missing key.
func (c *client) value(o *object) {
	if o == nil {
		c.null()
		return
	}
	c.bulk(o.str)
}

func cmdSet(c *client, args [][]byte) {
	var nx, xx, get bool
	for i := 3; i < len(args); i++ {
		switch opt := args[i]; {
		case is(opt, "NX"):
			nx = true
		case is(opt, "XX"):
			xx = true
		case is(opt, "GET"):
			get = true
		case is(opt, "KEEPTTL"):
		case is(opt, "EX"), is(opt, "PX"), is(opt, "EXAT"), is(opt, "PXAT"):
			// Accepted; the embedded target keeps no expiry.
			if i+1 >= len(args) {
				c.errorRaw(errSyntax)
				return
			}
			if _, ok := parseInt(args[i+1]); !ok {
				c.errorRaw(errNotInt)
				return
			}
			i++
		default:
			c.errorRaw(errSyntax)
			return
		}
	}
	if nx && xx {
		c.errorRaw(errSyntax)
		return
	}
	old := c.keys()[string(args[1])]
	if get && old != nil && old.kind != 's' {
		c.errorRaw(errWrongType)
		return
	}
	skip := (nx && old != nil) || (xx && old == nil)
	switch { // reply first: the old value's storage may be reused below
	case get:
		c.value(old)
	case skip:
		c.null()
	default:
		c.simple("OK")
	}
	if skip {
		return
	}
	if old != nil && old.kind == 's' {
		old.str = append(old.str[:0], args[2]...)
		c.resized(old)
		c.modified(args[1])
	} else {
		c.setKey(args[1], &object{kind: 's', str: clone(args[2])})
	}
}

func cmdGetSet(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 's')
	if !ok {
		return
	}
	c.value(o)
	c.setKey(a[1], &object{kind: 's', str: clone(a[2])})
}

func cmdMSet(c *client, a [][]byte) {
	if len(a)%2 != 1 {
		c.wrongArgs("mset")
		return
	}
	for i := 1; i < len(a); i += 2 {
		c.setKey(a[i], &object{kind: 's', str: clone(a[i+1])})
	}
	c.simple("OK")
}

func cmdMGet(c *client, a [][]byte) {
	c.array(len(a) - 1)
	for _, k := range a[1:] {
		if o := c.keys()[string(k)]; o != nil && o.kind == 's' {
			c.bulk(o.str)
		} else {
			c.null()
		}
	}
}

func cmdIncrBy(c *client, a [][]byte) {
	by, ok := parseInt(a[2])
	if !ok {
		c.errorRaw(errNotInt)
		return
	}
	if a[0][0] == 'd' || a[0][0] == 'D' {
		if by == math.MinInt64 {
			c.errorf("ERR decrement would overflow")
			return
		}
		by = -by
	}
	c.incrBy(a[1], by)
}

func (c *client) incrBy(key []byte, by int64) {
	o, ok := c.lookup(key, 's')
	if !ok {
		return
	}
	cur := int64(0)
	if o != nil {
		if cur, ok = parseInt(o.str); !ok {
			c.errorRaw(errNotInt)
			return
		}
	}
	if (by > 0 && cur > math.MaxInt64-by) || (by < 0 && cur < math.MinInt64-by) {
		c.errorRaw(errOverflow)
		return
	}
	cur += by
	if o == nil {
		c.setKey(key, &object{kind: 's', str: strconv.AppendInt(nil, cur, 10)})
	} else {
		o.str = strconv.AppendInt(o.str[:0], cur, 10)
		c.resized(o)
		c.modified(key)
	}
	c.integer(cur)
}

func cmdAppend(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 's')
	if !ok {
		return
	}
	if o != nil && len(o.str)+len(a[2]) > maxBulkLen {
		c.errorRaw(errTooLong)
		return
	}
	if o == nil {
		o, _ = c.create(a[1], 's')
	}
	o.str = append(o.str, a[2]...)
	c.resized(o)
	c.modified(a[1])
	c.integer(int64(len(o.str)))
}
