package embedded

// Streams: entries with their IDs (XADD with MAXLEN or MINID trimming,
// XRANGE, XDEL, XTRIM, XLEN) and the blocking XREAD. Consumer groups are
// in stream_groups.go.

import (
	"sort"
	"strconv"
	"time"
)

// streamID is an entry's ID, ms-seq.
type streamID struct{ ms, seq uint64 }

func (a streamID) less(b streamID) bool { return a.ms < b.ms || a.ms == b.ms && a.seq < b.seq }

func (a streamID) append(b []byte) []byte {
	b = strconv.AppendUint(b, a.ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.seq, 10)
}

func (a streamID) String() string { return string(a.append(nil)) }

// maxID is the largest ID ("+").
var maxID = streamID{^uint64(0), ^uint64(0)}

// parseID reads ms-seq, ms (seq is then def), "-" or "+".
func parseID(b []byte, def uint64) (streamID, bool) {
	switch string(b) {
	case "-":
		return streamID{}, true
	case "+":
		return maxID, true
	}
	ms, seq, hasSeq := cutByte(b, '-')
	m, err := strconv.ParseUint(string(ms), 10, 64)
	if err != nil {
		return streamID{}, false
	}
	if !hasSeq {
		return streamID{m, def}, true
	}
	s, err := strconv.ParseUint(string(seq), 10, 64)
	if err != nil {
		return streamID{}, false
	}
	return streamID{m, s}, true
}

func cutByte(b []byte, sep byte) (before, after []byte, found bool) {
	for i, ch := range b {
		if ch == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

// streamEntry is one entry: its ID and its fields and values.
type streamEntry struct {
	id     streamID
	fields [][]byte
}

// entryOverhead is what an entry costs beyond its bytes (slice headers,
// rounding), for the dataset's estimate.
const entryOverhead = 64

// stream is a stream's entries (entries[head:], in ID order), its last
// ID and its consumer groups.
type stream struct {
	entries []streamEntry
	head    int
	n       int
	last    streamID
	// added counts every entry ever added, maxDeleted is the largest ID
	// deleted or trimmed.
	added      uint64
	maxDeleted streamID
	groups     map[string]*group
}

// live is the stream's entries.
func (st *stream) live() []streamEntry { return st.entries[st.head:] }

// after returns the index in live() of the first entry with an ID above
// id.
func (st *stream) after(id streamID) int {
	l := st.live()
	return sort.Search(len(l), func(i int) bool { return id.less(l[i].id) })
}

// from returns the index in live() of the first entry with an ID at
// least id.
func (st *stream) from(id streamID) int {
	l := st.live()
	return sort.Search(len(l), func(i int) bool { return !l[i].id.less(id) })
}

// find returns the entry with id, if the stream holds it.
func (st *stream) find(id streamID) (*streamEntry, bool) {
	l := st.live()
	i := st.from(id)
	if i < len(l) && l[i].id == id {
		return &l[i], true
	}
	return nil, false
}

// dropFront removes the first k live entries, returning their bytes.
func (st *stream) dropFront(k int) int64 {
	var b int64
	for i := st.head; i < st.head+k; i++ {
		b += entryBytes(st.entries[i])
		st.maxDeleted = st.entries[i].id
		st.entries[i] = streamEntry{}
	}
	st.head += k
	st.n -= k
	if st.head > 1024 && st.head > len(st.entries)/2 {
		st.entries = append([]streamEntry(nil), st.entries[st.head:]...)
		st.head = 0
	}
	return b
}

func entryBytes(e streamEntry) int64 {
	n := int64(entryOverhead)
	for _, f := range e.fields {
		n += int64(len(f))
	}
	return n
}

// trim is a parsed MAXLEN or MINID.
type trim struct {
	maxLen int64 // -1: none
	minID  streamID
	byID   bool
}

// parseTrim reads MAXLEN|MINID [=|~] threshold [LIMIT n] at a[i]; it
// returns the index past it, or answers the error and reports false.
func (c *client) parseTrim(a [][]byte, i int) (trim, int, bool) {
	t := trim{maxLen: -1, byID: is(a[i], "MINID")}
	i++
	if i < len(a) && (string(a[i]) == "~" || string(a[i]) == "=") {
		i++
	}
	if i >= len(a) {
		c.errorRaw(errSyntax)
		return t, i, false
	}
	if t.byID {
		id, ok := parseID(a[i], 0)
		if !ok {
			c.errorf("ERR Invalid stream ID specified as stream command argument")
			return t, i, false
		}
		t.minID = id
	} else {
		n, ok := parseInt(a[i])
		if !ok || n < 0 {
			c.errorf("ERR The MAXLEN argument must be >= 0.")
			return t, i, false
		}
		t.maxLen = n
	}
	i++
	if i+1 < len(a) && is(a[i], "LIMIT") {
		i += 2 // the embedded target trims exactly: LIMIT is accepted, not needed
	}
	return t, i, true
}

// apply trims st, returning how many entries it removed and their bytes.
func (t trim) apply(st *stream) (int, int64) {
	k := 0
	switch {
	case t.byID:
		k = st.from(t.minID)
	case t.maxLen >= 0 && int64(st.n) > t.maxLen:
		k = st.n - int(t.maxLen)
	}
	if k == 0 {
		return 0, 0
	}
	return k, st.dropFront(k)
}

// cmdXAdd is XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] n [LIMIT c]] *|ID field value...
func cmdXAdd(c *client, a [][]byte) {
	i, noMk := 2, false
	tr := trim{maxLen: -1}
	for i < len(a) {
		switch {
		case is(a[i], "NOMKSTREAM"):
			noMk = true
			i++
			continue
		case is(a[i], "MAXLEN"), is(a[i], "MINID"):
			var ok bool
			if tr, i, ok = c.parseTrim(a, i); !ok {
				return
			}
			continue
		}
		break
	}
	if i >= len(a) || (len(a)-i-1)%2 != 0 || len(a)-i-1 == 0 {
		c.wrongArgs("xadd")
		return
	}
	if noMk {
		if o, ok := c.lookup(a[1], 'x'); !ok || o == nil {
			if ok {
				c.nullOr("$-1\r\n")
			}
			return
		}
	}
	o, ok := c.create(a[1], 'x')
	if !ok {
		return
	}
	st := o.stream
	id, ok := c.nextID(st, a[i])
	if !ok {
		if st.n == 0 && st.added == 0 && len(st.groups) == 0 {
			c.delKey(a[1])
		}
		return
	}
	e := streamEntry{id: id, fields: make([][]byte, 0, len(a)-i-1)}
	for _, f := range a[i+1:] {
		e.fields = append(e.fields, clone(f))
	}
	st.entries = append(st.entries, e)
	st.n++
	st.added++
	st.last = id
	o.bytes += entryBytes(e)
	_, freed := tr.apply(st)
	o.bytes -= freed
	c.resized(o)
	c.modified(a[1])
	c.srv.wakeReaders(a[1])
	var buf [48]byte
	c.bulk(id.append(buf[:0]))
}

// nextID is the ID of the entry XADD adds: "*" the clock's millisecond
// (never below the last's), "ms-*" the next sequence of ms, or an ID
// given, which must exceed the last.
func (c *client) nextID(st *stream, arg []byte) (streamID, bool) {
	if string(arg) == "*" {
		ms := uint64(time.Now().UnixMilli())
		if ms <= st.last.ms {
			if st.last.seq == ^uint64(0) {
				ms = st.last.ms + 1
			} else {
				return streamID{st.last.ms, st.last.seq + 1}, true
			}
		}
		return streamID{ms, 0}, true
	}
	var id streamID
	if ms, seq, ok := cutByte(arg, '-'); ok && string(seq) == "*" {
		m, err := strconv.ParseUint(string(ms), 10, 64)
		if err != nil {
			c.errorf("ERR Invalid stream ID specified as stream command argument")
			return id, false
		}
		id = streamID{m, 0}
		if m == st.last.ms && (st.n > 0 || st.added > 0) {
			id.seq = st.last.seq + 1
		}
	} else {
		var ok bool
		if id, ok = parseID(arg, 0); !ok {
			c.errorf("ERR Invalid stream ID specified as stream command argument")
			return id, false
		}
	}
	if id == (streamID{}) {
		c.errorf("ERR The ID specified in XADD must be greater than 0-0")
		return id, false
	}
	if !st.last.less(id) {
		c.errorf("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return id, false
	}
	return id, true
}

// entry appends one entry as XRANGE and XREAD give it: [id, [f, v, ...]].
func (c *client) entry(e *streamEntry) {
	c.array(2)
	var buf [48]byte
	c.bulk(e.id.append(buf[:0]))
	c.array(len(e.fields))
	for _, f := range e.fields {
		c.bulk(f)
	}
}

// cmdXRange is XRANGE key start end [COUNT n].
func cmdXRange(c *client, a [][]byte) {
	start, ok1 := parseID(a[2], 0)
	end, ok2 := parseID(a[3], ^uint64(0))
	if !ok1 || !ok2 {
		c.errorf("ERR Invalid stream ID specified as stream command argument")
		return
	}
	count := int64(-1)
	if len(a) == 6 && is(a[4], "COUNT") {
		n, ok := parseInt(a[5])
		if !ok {
			c.errorRaw(errNotInt)
			return
		}
		count = max(n, 0)
	} else if len(a) != 4 {
		c.errorRaw(errSyntax)
		return
	}
	o, ok := c.lookup(a[1], 'x')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	l := o.stream.live()
	lo := o.stream.from(start)
	hi := lo
	for hi < len(l) && !end.less(l[hi].id) && (count < 0 || int64(hi-lo) < count) {
		hi++
	}
	c.array(hi - lo)
	for k := lo; k < hi; k++ {
		c.entry(&l[k])
	}
}

// cmdXDel is XDEL key id...: it removes the entries it finds.
func cmdXDel(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 'x')
	if !ok {
		return
	}
	n := 0
	if o != nil {
		st := o.stream
		for _, arg := range a[2:] {
			id, ok := parseID(arg, 0)
			if !ok {
				c.errorf("ERR Invalid stream ID specified as stream command argument")
				return
			}
			l := st.live()
			k := st.from(id)
			if k >= len(l) || l[k].id != id {
				continue
			}
			o.bytes -= entryBytes(l[k])
			copy(st.entries[st.head+k:], st.entries[st.head+k+1:])
			st.entries = st.entries[:len(st.entries)-1]
			st.n--
			if st.maxDeleted.less(id) {
				st.maxDeleted = id
			}
			n++
		}
		c.resized(o)
		if n > 0 {
			c.modified(a[1])
		}
	}
	c.integer(int64(n))
}

// cmdXTrim is XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT n].
func cmdXTrim(c *client, a [][]byte) {
	if !is(a[2], "MAXLEN") && !is(a[2], "MINID") {
		c.errorRaw(errSyntax)
		return
	}
	tr, i, ok := c.parseTrim(a, 2)
	if !ok {
		return
	}
	if i != len(a) {
		c.errorRaw(errSyntax)
		return
	}
	o, ok := c.lookup(a[1], 'x')
	if !ok {
		return
	}
	if o == nil {
		c.integer(0)
		return
	}
	k, freed := tr.apply(o.stream)
	o.bytes -= freed
	c.resized(o)
	if k > 0 {
		c.modified(a[1])
	}
	c.integer(int64(k))
}

// readArgs is XREAD's or XREADGROUP's options and streams: COUNT, BLOCK,
// NOACK, then STREAMS key... id....
type readArgs struct {
	count   int64 // 0: all
	block   int64 // ms; -1: no BLOCK
	noAck   bool
	keys    [][]byte
	ids     [][]byte
	grouped bool
}

// parseRead reads a's options from i on, or answers the error.
func (c *client) parseRead(a [][]byte, i int, grouped bool) (readArgs, bool) {
	r := readArgs{block: -1, grouped: grouped}
	for ; i < len(a); i++ {
		switch {
		case is(a[i], "COUNT") && i+1 < len(a):
			n, ok := parseInt(a[i+1])
			if !ok {
				c.errorRaw(errNotInt)
				return r, false
			}
			r.count = max(n, 0)
			i++
		case is(a[i], "BLOCK") && i+1 < len(a):
			n, ok := parseInt(a[i+1])
			if !ok || n < 0 {
				c.errorf("ERR timeout is negative")
				return r, false
			}
			r.block = n
			i++
		case is(a[i], "NOACK") && grouped:
			r.noAck = true
		case is(a[i], "STREAMS"):
			rest := a[i+1:]
			if len(rest) == 0 || len(rest)%2 != 0 {
				c.errorf("ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.")
				return r, false
			}
			r.keys, r.ids = rest[:len(rest)/2], rest[len(rest)/2:]
			return r, true
		default:
			c.errorRaw(errSyntax)
			return r, false
		}
	}
	c.errorRaw(errSyntax)
	return r, false
}

// readReply appends a stream read's reply: for each stream with entries,
// its key and its entries (got[k]); null when none has any.
func (c *client) readReply(keys [][]byte, got [][]*streamEntry, ids [][]streamID) bool {
	n := 0
	for _, g := range got {
		if len(g) > 0 {
			n++
		}
	}
	if n == 0 {
		return false
	}
	if c.proto == 3 {
		c.line('%', int64(n))
	} else {
		c.array(n)
	}
	var buf [48]byte
	for k, g := range got {
		if len(g) == 0 {
			continue
		}
		if c.proto != 3 {
			c.array(2)
		}
		c.bulk(keys[k])
		c.array(len(g))
		for j, e := range g {
			if e != nil {
				c.entry(e)
				continue
			}
			c.array(2) // a pending entry since deleted
			c.bulk(ids[k][j].append(buf[:0]))
			c.nullArray()
		}
	}
	return true
}

// cmdXRead is XREAD [COUNT n] [BLOCK ms] STREAMS key... id...: the entries
// after each ID ("$": after the last when the read began).
func cmdXRead(c *client, a [][]byte) {
	r, ok := c.parseRead(a, 1, false)
	if !ok {
		return
	}
	got := make([][]*streamEntry, len(r.keys))
	if c.blockFrom == nil {
		c.blockFrom = make([]streamID, len(r.keys))
		for k, key := range r.keys {
			o, ok := c.lookup(key, 'x')
			if !ok {
				c.blockFrom = nil
				return
			}
			switch {
			case string(r.ids[k]) == "$":
				if o != nil {
					c.blockFrom[k] = o.stream.last
				}
			default:
				id, ok := parseID(r.ids[k], 0)
				if !ok {
					c.blockFrom = nil
					c.errorf("ERR Invalid stream ID specified as stream command argument")
					return
				}
				c.blockFrom[k] = id
			}
		}
	}
	for k, key := range r.keys {
		o := c.keys()[string(key)]
		if o == nil || o.kind != 'x' {
			continue
		}
		l := o.stream.live()
		for i := o.stream.after(c.blockFrom[k]); i < len(l) && (r.count == 0 || int64(len(got[k])) < r.count); i++ {
			got[k] = append(got[k], &l[i])
		}
	}
	if c.readReply(r.keys, got, nil) || !c.waitFor(r) {
		c.blockFrom = nil
	}
}

// waitFor blocks the client on r's keys when r has BLOCK and its time has
// not run out, or answers the null reply: it reports whether it blocked.
func (c *client) waitFor(r readArgs) bool {
	if r.block < 0 {
		c.nullArray()
		return false
	}
	if c.blockUntil == 0 {
		c.blockUntil = -1 // forever
		if r.block > 0 {
			c.blockUntil = now() + r.block*int64(time.Millisecond)
		}
	} else if c.blockUntil > 0 && now() >= c.blockUntil {
		c.blockUntil = 0
		c.nullArray()
		return false
	}
	c.block = r.keys
	c.srv.addWaiter(c)
	return true
}
