package embedded

// Lists: LPUSH, RPUSH, LPOP, RPOP, LRANGE, over a ring buffer.

import "strings"

func cmdPush(c *client, a [][]byte) {
	o, ok := c.create(a[1], 'l')
	if !ok {
		return
	}
	left := a[0][0] == 'l' || a[0][0] == 'L'
	for _, v := range a[2:] {
		if left {
			o.list.pushFront(clone(v))
		} else {
			o.list.pushBack(clone(v))
		}
		o.bytes += int64(len(v))
	}
	c.resized(o)
	c.modified(a[1])
	c.integer(int64(o.list.len()))
}

func cmdPop(c *client, a [][]byte) {
	if len(a) > 3 {
		c.wrongArgs(strings.ToLower(string(a[0])))
		return
	}
	n, withCount := int64(1), len(a) == 3
	if withCount {
		var ok bool
		if n, ok = c.countArg(a[2]); !ok {
			return
		}
	}
	o, ok := c.lookup(a[1], 'l')
	if !ok {
		return
	}
	if o == nil {
		if withCount {
			c.nullArray()
		} else {
			c.null()
		}
		return
	}
	if withCount {
		n = min(n, int64(o.list.len()))
		c.array(int(n))
	}
	left := a[0][0] == 'l' || a[0][0] == 'L'
	for range n {
		var v []byte
		if left {
			v = o.list.popFront()
		} else {
			v = o.list.popBack()
		}
		o.bytes -= int64(len(v))
		c.bulk(v)
	}
	if n > 0 {
		c.modified(a[1])
	}
	c.settle(a[1], o)
}

func cmdLRange(c *client, a [][]byte) {
	start64, ok1 := parseInt(a[2])
	stop64, ok2 := parseInt(a[3])
	if !ok1 || !ok2 {
		c.errorRaw(errNotInt)
		return
	}
	o, ok := c.lookup(a[1], 'l')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n := int64(o.list.len())
	start, stop := start64, stop64
	if start < 0 {
		start = max(n+start, 0)
	}
	if stop < 0 {
		stop = n + stop
	}
	stop = min(stop, n-1)
	if start > stop || start >= n {
		c.array(0)
		return
	}
	c.array(int(stop - start + 1))
	for i := start; i <= stop; i++ {
		c.bulk(o.list.at(int(i)))
	}
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
