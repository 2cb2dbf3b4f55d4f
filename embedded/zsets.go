package embedded

// Sorted sets: ZADD, ZPOPMIN, ZSCORE, over a score map and a min-heap.

import (
	"container/heap"
	"math"
	"strconv"
	"strings"
)

func cmdZAdd(c *client, args [][]byte) {
	i := 2
	var nx, xx, ch bool
options:
	for ; i < len(args); i++ {
		switch opt := args[i]; {
		case is(opt, "NX"):
			nx = true
		case is(opt, "XX"):
			xx = true
		case is(opt, "CH"):
			ch = true
		case is(opt, "GT"), is(opt, "LT"), is(opt, "INCR"):
			c.errorf("ERR the embedded target does not support ZADD " + strings.ToUpper(string(opt)))
			return
		default:
			break options
		}
	}
	pairs := args[i:]
	if nx && xx {
		c.errorf("ERR XX and NX options at the same time are not compatible")
		return
	}
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		c.errorRaw(errSyntax)
		return
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, err := strconv.ParseFloat(string(pairs[2*j]), 64)
		if err != nil || math.IsNaN(f) {
			c.errorRaw(errNotFloat)
			return
		}
		scores[j] = f
	}
	o, ok := c.create(args[1], 'z')
	if !ok {
		return
	}
	added, changed := 0, 0
	for j, sc := range scores {
		m := string(pairs[2*j+1])
		old, there := o.zset.score[m]
		if (nx && there) || (xx && !there) {
			continue
		}
		if !there {
			added++
			o.bytes += int64(len(m))
		} else if old != sc {
			changed++
		} else {
			continue
		}
		o.zset.set(m, sc)
	}
	if added+changed > 0 {
		c.modified(args[1])
	}
	c.settle(args[1], o)
	if ch {
		c.integer(int64(added + changed))
	} else {
		c.integer(int64(added))
	}
}

func cmdZPopMin(c *client, a [][]byte) {
	if len(a) > 3 {
		c.errorRaw(errSyntax)
		return
	}
	count := int64(1)
	if len(a) == 3 {
		var ok bool
		if count, ok = c.countArg(a[2]); !ok {
			return
		}
	}
	o, ok := c.lookup(a[1], 'z')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n := int(min(count, int64(len(o.zset.score))))
	c.array(2 * n)
	for range n {
		m, sc := o.zset.popMin()
		o.bytes -= int64(len(m))
		c.bulkString(m)
		c.bulkFloat(sc)
	}
	if n > 0 {
		c.modified(a[1])
	}
	c.settle(a[1], o)
}

func cmdZScore(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'z'); ok {
		if o == nil {
			c.null()
		} else if sc, there := o.zset.score[string(a[2])]; there {
			c.float(sc)
		} else {
			c.null()
		}
	}
}

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
