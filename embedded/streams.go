package embedded

// Streams: XADD hands out IDs and XLEN counts; entries are not kept.

import (
	"strconv"
	"time"
)

func cmdXAdd(c *client, args [][]byte) {
	if len(args)%2 != 1 {
		c.wrongArgs("xadd")
		return
	}
	if string(args[2]) != "*" {
		c.errorf("ERR the embedded target only supports XADD with * IDs")
		return
	}
	o, ok := c.create(args[1], 'x')
	if !ok {
		return
	}
	ms := time.Now().UnixMilli()
	st := o.stream
	if ms > st.lastMs {
		st.lastMs, st.lastSeq = ms, 0
	} else {
		st.lastSeq++
	}
	st.n++
	id := strconv.AppendInt(nil, st.lastMs, 10)
	id = append(id, '-')
	id = strconv.AppendUint(id, st.lastSeq, 10)
	c.bulk(id)
}

// stream counts entries and hands out IDs; the embedded target does not
// keep entries (no XRANGE/XREAD).
type stream struct {
	n       int
	lastMs  int64
	lastSeq uint64
}
