package embedded

// Consumer groups: XGROUP, XREADGROUP (with BLOCK), XACK, XPENDING and
// XINFO, and how a blocked read waits: the connection's goroutine waits,
// outside the server lock, until an XADD to one of its keys or its
// timeout, then runs the read again.

import (
	"errors"
	"net"
	"sort"
	"strconv"
	"time"
)

// group is a consumer group: the last ID it delivered, its pending
// entries (delivered, not yet acknowledged) and its consumers.
type group struct {
	last      streamID
	read      uint64 // entries delivered with ">" (entries-read)
	pel       map[streamID]*pending
	consumers map[string]*consumer
}

// pending is a delivered entry not yet acknowledged.
type pending struct {
	owner     *consumer
	delivered int64 // when it was last delivered (Unix ms)
	count     uint64
}

// consumer is one consumer of a group.
type consumer struct {
	name     string
	pending  int
	seen     int64 // last interaction (Unix ms)
	active   int64 // last successful read (Unix ms)
	hasReads bool
}

func (g *group) consumer(name []byte) *consumer {
	co := g.consumers[string(name)]
	if co == nil {
		co = &consumer{name: string(name)}
		g.consumers[co.name] = co
	}
	co.seen = time.Now().UnixMilli()
	return co
}

// groupOf returns key's stream and its group name, or answers NOGROUP.
func (c *client) groupOf(key, name []byte, cmd string) (*object, *group, bool) {
	o, ok := c.lookup(key, 'x')
	if !ok {
		return nil, nil, false
	}
	var g *group
	if o != nil {
		g = o.stream.groups[string(name)]
	}
	if g == nil {
		c.errorf("NOGROUP No such key '" + string(key[:min(len(key), quoteLimit)]) + "' or consumer group '" + string(name[:min(len(name), quoteLimit)]) + "' in " + cmd + " with GROUP option")
		return nil, nil, false
	}
	return o, g, true
}

// cmdXGroup is XGROUP CREATE | DESTROY | CREATECONSUMER | DELCONSUMER | SETID.
func cmdXGroup(c *client, a [][]byte) {
	sub := a[1]
	switch {
	case is(sub, "CREATE") && len(a) >= 5:
		mk := false
		for _, opt := range a[5:] {
			if is(opt, "MKSTREAM") {
				mk = true
			}
		}
		o, ok := c.lookup(a[2], 'x')
		if !ok {
			return
		}
		if o == nil {
			if !mk {
				c.errorf("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
				return
			}
			o, _ = c.create(a[2], 'x')
		}
		st := o.stream
		if st.groups[string(a[3])] != nil {
			c.errorf("BUSYGROUP Consumer Group name already exists")
			return
		}
		g := &group{pel: map[streamID]*pending{}, consumers: map[string]*consumer{}}
		if string(a[4]) == "$" {
			g.last, g.read = st.last, st.added
		} else {
			id, ok := parseID(a[4], 0)
			if !ok {
				c.errorf("ERR Invalid stream ID specified as stream command argument")
				return
			}
			g.last = id
		}
		if st.groups == nil {
			st.groups = map[string]*group{}
		}
		st.groups[string(a[3])] = g
		c.simple("OK")
	case is(sub, "DESTROY") && len(a) == 4:
		o, ok := c.lookup(a[2], 'x')
		if !ok {
			return
		}
		if o == nil {
			c.errorf("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
			return
		}
		_, had := o.stream.groups[string(a[3])]
		delete(o.stream.groups, string(a[3]))
		c.boolean(had)
	case is(sub, "CREATECONSUMER") && len(a) == 5:
		_, g, ok := c.groupOf(a[2], a[3], "XGROUP")
		if !ok {
			return
		}
		_, had := g.consumers[string(a[4])]
		g.consumer(a[4])
		c.boolean(!had)
	case is(sub, "DELCONSUMER") && len(a) == 5:
		_, g, ok := c.groupOf(a[2], a[3], "XGROUP")
		if !ok {
			return
		}
		co := g.consumers[string(a[4])]
		if co == nil {
			c.integer(0)
			return
		}
		for id, p := range g.pel {
			if p.owner == co {
				delete(g.pel, id)
			}
		}
		delete(g.consumers, co.name)
		c.integer(int64(co.pending))
	case is(sub, "SETID") && len(a) >= 5:
		o, g, ok := c.groupOf(a[2], a[3], "XGROUP")
		if !ok {
			return
		}
		if string(a[4]) == "$" {
			g.last = o.stream.last
		} else if id, ok := parseID(a[4], 0); ok {
			g.last = id
		} else {
			c.errorf("ERR Invalid stream ID specified as stream command argument")
			return
		}
		c.simple("OK")
	default:
		c.unknownSubcommand(sub, "XGROUP")
	}
}

// cmdXReadGroup is XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms]
// [NOACK] STREAMS key... id...: ">" delivers the entries no consumer of
// the group has had (and makes them pending), another ID the consumer's
// own pending entries after it.
func cmdXReadGroup(c *client, a [][]byte) {
	if !is(a[1], "GROUP") {
		c.errorRaw(errSyntax)
		return
	}
	r, ok := c.parseRead(a, 4, true)
	if !ok {
		return
	}
	type target struct {
		o *object
		g *group
	}
	ts := make([]target, len(r.keys))
	for k, key := range r.keys {
		o, g, ok := c.groupOf(key, a[2], "XREADGROUP")
		if !ok {
			c.blockUntil = 0
			return
		}
		ts[k] = target{o, g}
	}
	got := make([][]*streamEntry, len(r.keys))
	ids := make([][]streamID, len(r.keys))
	nowMs := time.Now().UnixMilli()
	anyNew := false
	for k := range r.keys {
		st, g := ts[k].o.stream, ts[k].g
		co := g.consumer(a[3])
		if string(r.ids[k]) == ">" {
			anyNew = true
			l := st.live()
			for i := st.after(g.last); i < len(l) && (r.count == 0 || int64(len(got[k])) < r.count); i++ {
				e := &l[i]
				got[k] = append(got[k], e)
				ids[k] = append(ids[k], e.id)
				g.last = e.id
				g.read++
				if !r.noAck {
					if p := g.pel[e.id]; p != nil { // an ID reused after XGROUP SETID
						p.owner.pending--
					}
					g.pel[e.id] = &pending{owner: co, delivered: nowMs, count: 1}
					co.pending++
				}
			}
			if len(got[k]) > 0 {
				co.active, co.hasReads = nowMs, true
			}
			continue
		}
		from, ok := parseID(r.ids[k], 0)
		if !ok {
			c.errorf("ERR Invalid stream ID specified as stream command argument")
			return
		}
		var mine []streamID
		for id, p := range g.pel {
			if p.owner == co && from.less(id) {
				mine = append(mine, id)
			}
		}
		sort.Slice(mine, func(i, j int) bool { return mine[i].less(mine[j]) })
		if r.count > 0 && int64(len(mine)) > r.count {
			mine = mine[:r.count]
		}
		for _, id := range mine {
			p := g.pel[id]
			p.count++
			p.delivered = nowMs
			e, _ := st.find(id)
			got[k] = append(got[k], e) // nil: deleted since
			ids[k] = append(ids[k], id)
		}
		if len(mine) == 0 {
			// History: an empty array per stream, never null.
			got[k] = nil
		}
	}
	if !anyNew {
		// A read of history answers at once, with every stream.
		c.historyReply(r.keys, got, ids)
		return
	}
	if c.readReply(r.keys, got, ids) {
		c.blockUntil = 0
		return
	}
	c.waitFor(r)
}

// historyReply answers a read of pending entries: every stream, with its
// entries (an empty list for none).
func (c *client) historyReply(keys [][]byte, got [][]*streamEntry, ids [][]streamID) {
	if c.proto == 3 {
		c.line('%', int64(len(keys)))
	} else {
		c.array(len(keys))
	}
	var buf [48]byte
	for k := range keys {
		if c.proto != 3 {
			c.array(2)
		}
		c.bulk(keys[k])
		c.array(len(got[k]))
		for j, e := range got[k] {
			if e != nil {
				c.entry(e)
				continue
			}
			c.array(2)
			c.bulk(ids[k][j].append(buf[:0]))
			c.nullArray()
		}
	}
}

// cmdXAck is XACK key group id...: the entries leave the group's pending
// list; the reply counts those that were in it.
func cmdXAck(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 'x')
	if !ok {
		return
	}
	var g *group
	if o != nil {
		g = o.stream.groups[string(a[2])]
	}
	n := 0
	for _, arg := range a[3:] {
		id, ok := parseID(arg, 0)
		if !ok {
			c.errorf("ERR Invalid stream ID specified as stream command argument")
			return
		}
		if g == nil {
			continue
		}
		if p := g.pel[id]; p != nil {
			p.owner.pending--
			delete(g.pel, id)
			n++
		}
	}
	c.integer(int64(n))
}

// cmdXPending is XPENDING key group (the summary) or XPENDING key group
// [IDLE ms] start end count [consumer] (the entries).
func cmdXPending(c *client, a [][]byte) {
	_, g, ok := c.groupOf(a[1], a[2], "XPENDING")
	if !ok {
		return
	}
	ids := make([]streamID, 0, len(g.pel))
	for id := range g.pel {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })
	var buf [48]byte
	if len(a) == 3 {
		if len(ids) == 0 {
			c.array(4)
			c.integer(0)
			c.null()
			c.null()
			c.nullArray()
			return
		}
		per := map[string]int{}
		for _, id := range ids {
			per[g.pel[id].owner.name]++
		}
		names := make([]string, 0, len(per))
		for n := range per {
			names = append(names, n)
		}
		sort.Strings(names)
		c.array(4)
		c.integer(int64(len(ids)))
		c.bulk(ids[0].append(buf[:0]))
		c.bulk(ids[len(ids)-1].append(buf[:0]))
		c.array(len(names))
		for _, n := range names {
			c.array(2)
			c.bulkString(n)
			c.bulkString(strconv.Itoa(per[n]))
		}
		return
	}
	i, idle := 3, int64(0)
	if is(a[i], "IDLE") && len(a) > i+1 {
		n, ok := parseInt(a[i+1])
		if !ok {
			c.errorRaw(errNotInt)
			return
		}
		idle, i = n, i+2
	}
	if len(a) < i+3 || len(a) > i+4 {
		c.errorRaw(errSyntax)
		return
	}
	start, ok1 := parseID(a[i], 0)
	end, ok2 := parseID(a[i+1], ^uint64(0))
	count, ok3 := parseInt(a[i+2])
	if !ok1 || !ok2 || !ok3 {
		c.errorRaw(errSyntax)
		return
	}
	var who []byte
	if len(a) == i+4 {
		who = a[i+3]
	}
	nowMs := time.Now().UnixMilli()
	var out []streamID
	for _, id := range ids {
		p := g.pel[id]
		if id.less(start) || end.less(id) || who != nil && p.owner.name != string(who) || nowMs-p.delivered < idle {
			continue
		}
		if int64(len(out)) >= count {
			break
		}
		out = append(out, id)
	}
	c.array(len(out))
	for _, id := range out {
		p := g.pel[id]
		c.array(4)
		c.bulk(id.append(buf[:0]))
		c.bulkString(p.owner.name)
		c.integer(nowMs - p.delivered)
		c.integer(int64(p.count))
	}
}

// cmdXInfo is XINFO STREAM key, XINFO GROUPS key and XINFO CONSUMERS key
// group.
func cmdXInfo(c *client, a [][]byte) {
	sub := a[1]
	if len(a) < 3 {
		c.wrongArgs("xinfo|" + string(lower(sub)))
		return
	}
	o, ok := c.lookup(a[2], 'x')
	if !ok {
		return
	}
	if o == nil {
		c.errorf("ERR no such key")
		return
	}
	st := o.stream
	var buf [48]byte
	switch {
	case is(sub, "STREAM"):
		c.mapHeader(10)
		c.bulkString("length")
		c.integer(int64(st.n))
		c.bulkString("radix-tree-keys")
		c.integer(1)
		c.bulkString("radix-tree-nodes")
		c.integer(2)
		c.bulkString("last-generated-id")
		c.bulk(st.last.append(buf[:0]))
		c.bulkString("max-deleted-entry-id")
		c.bulk(st.maxDeleted.append(buf[:0]))
		c.bulkString("entries-added")
		c.integer(int64(st.added))
		c.bulkString("recorded-first-entry-id")
		l := st.live()
		if len(l) > 0 {
			c.bulk(l[0].id.append(buf[:0]))
		} else {
			c.bulkString("0-0")
		}
		c.bulkString("groups")
		c.integer(int64(len(st.groups)))
		c.bulkString("first-entry")
		if len(l) > 0 {
			c.entry(&l[0])
		} else {
			c.null()
		}
		c.bulkString("last-entry")
		if len(l) > 0 {
			c.entry(&l[len(l)-1])
		} else {
			c.null()
		}
	case is(sub, "GROUPS"):
		names := make([]string, 0, len(st.groups))
		for n := range st.groups {
			names = append(names, n)
		}
		sort.Strings(names)
		c.array(len(names))
		for _, n := range names {
			g := st.groups[n]
			c.mapHeader(6)
			c.bulkString("name")
			c.bulkString(n)
			c.bulkString("consumers")
			c.integer(int64(len(g.consumers)))
			c.bulkString("pending")
			c.integer(int64(len(g.pel)))
			c.bulkString("last-delivered-id")
			c.bulk(g.last.append(buf[:0]))
			c.bulkString("entries-read")
			c.integer(int64(g.read))
			c.bulkString("lag")
			c.integer(int64(st.added - min(st.added, g.read)))
		}
	case is(sub, "CONSUMERS") && len(a) == 4:
		g := st.groups[string(a[3])]
		if g == nil {
			c.errorf("NOGROUP No such consumer group '" + string(a[3][:min(len(a[3]), quoteLimit)]) + "' for key name '" + string(a[2][:min(len(a[2]), quoteLimit)]) + "'")
			return
		}
		names := make([]string, 0, len(g.consumers))
		for n := range g.consumers {
			names = append(names, n)
		}
		sort.Strings(names)
		nowMs := time.Now().UnixMilli()
		c.array(len(names))
		for _, n := range names {
			co := g.consumers[n]
			c.mapHeader(4)
			c.bulkString("name")
			c.bulkString(n)
			c.bulkString("pending")
			c.integer(int64(co.pending))
			c.bulkString("idle")
			c.integer(nowMs - co.seen)
			c.bulkString("inactive")
			if co.hasReads {
				c.integer(nowMs - co.active)
			} else {
				c.integer(-1)
			}
		}
	default:
		c.unknownSubcommand(sub, "XINFO")
	}
}

// addWaiter registers a blocked client on its keys. Call with mu held.
func (s *Server) addWaiter(c *client) {
	if s.waiters == nil {
		s.waiters = map[string]map[*client]struct{}{}
	}
	for _, k := range c.block {
		m := s.waiters[string(k)]
		if m == nil {
			m = map[*client]struct{}{}
			s.waiters[string(k)] = m
		}
		m[c] = struct{}{}
	}
}

// dropWaiter unregisters a client that blocked on keys. Call with mu
// held.
func (s *Server) dropWaiter(c *client, keys [][]byte) {
	for _, k := range keys {
		if m := s.waiters[string(k)]; m != nil {
			delete(m, c)
			if len(m) == 0 {
				delete(s.waiters, string(k))
			}
		}
	}
}

// wakeReaders wakes the clients blocked on key. Call with mu held.
func (s *Server) wakeReaders(key []byte) {
	for c := range s.waiters[string(key)] {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// awaitBlock waits, outside the server lock, until a client blocked on
// a read is woken, its time runs out, the server closes or the client
// goes (false for either). It leaves the client unregistered, ready to run
// the read again. Meanwhile it reads the socket a byte at a time, as
// Redis's event loop watches a blocked client's: a client that closed
// its connection must not take entries it will never see, and what one
// sends meanwhile waits in its input.
func (cn *connection) awaitBlock() bool {
	c, s := &cn.cl, cn.srv
	var timeout <-chan time.Time
	if c.blockUntil > 0 {
		t := time.NewTimer(time.Duration(c.blockUntil - now()))
		defer t.Stop()
		timeout = t.C
	}
	type read struct {
		b   byte
		n   int
		err error
	}
	watch := make(chan read, 1)
	watching := false
	ok := true
wait:
	for {
		if !watching {
			watching = true
			go func() {
				var b [1]byte
				n, err := cn.nc.Read(b[:])
				watch <- read{b[0], n, err}
			}()
		}
		select {
		case <-c.wake:
			break wait
		case <-timeout:
			break wait
		case <-s.quit:
			ok = false
			break wait
		case r := <-watch:
			watching = false
			if r.n > 0 {
				cn.keep(r.b)
			}
			if r.err != nil {
				ok = false
				break wait
			}
		}
	}
	if watching {
		// Stop the watcher's read, keeping what it got.
		_ = cn.nc.SetReadDeadline(time.Unix(1, 0))
		r := <-watch
		_ = cn.nc.SetReadDeadline(time.Time{})
		if r.n > 0 {
			cn.keep(r.b)
		}
		if r.err != nil && !isTimeout(r.err) {
			ok = false
		}
	}
	s.mu.Lock()
	s.dropWaiter(c, c.block)
	c.block = nil
	s.mu.Unlock()
	select { // a wake that came meanwhile is answered by the read itself
	case <-c.wake:
	default:
	}
	return ok
}

// keep appends a byte read while the client was blocked to its input.
// The blocked command's arguments point into the buffer before cn.w, so
// a full buffer grows by copying, never by moving them.
func (cn *connection) keep(b byte) {
	if cn.w == len(cn.buf) {
		nb := make([]byte, 2*len(cn.buf))
		copy(nb, cn.buf[:cn.w])
		cn.buf = nb
	}
	cn.buf[cn.w] = b
	cn.w++
	cn.unread = true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
