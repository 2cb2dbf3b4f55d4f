package embedded

// Pub/Sub: SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE with their UNSUBSCRIBEs,
// PUBLISH and SPUBLISH, PUBSUB. A subscribed connection has an outbox
// that a writer goroutine of its own empties, so that a publisher never
// waits for a subscriber's socket: a message is appended to the outbox of
// every receiver when PUBLISH executes, and written when the virtual
// clock says the PUBLISH finished, so stalls and delays reach deliveries
// as they reach replies. A subscriber whose outbox outgrows
// Config.MaxPubsubBuffer is disconnected (Redis's client-output-buffer-limit
// pubsub). A RESP3 connection with CLIENT TRACKING on has an outbox too,
// for its invalidations (tracking.go); subscribed to nothing, it is a
// normal client, bounded by Config.MaxOutputBuffer.

import (
	"net"
	"sort"
	"sync"

	"github.com/pacer-load/pacer/internal/clock"
)

// DefaultMaxPubsubBuffer is a subscriber's outbox limit: Redis's default
// hard limit for pubsub clients (client-output-buffer-limit pubsub 32mb).
const DefaultMaxPubsubBuffer = 32 << 20

// registry is the server's subscriptions, under Server.mu.
type registry struct {
	channels, patterns, shards map[string]map[*outbox]struct{}
}

func (r *registry) of(kind byte) map[string]map[*outbox]struct{} {
	switch kind {
	case 'p':
		if r.patterns == nil {
			r.patterns = map[string]map[*outbox]struct{}{}
		}
		return r.patterns
	case 's':
		if r.shards == nil {
			r.shards = map[string]map[*outbox]struct{}{}
		}
		return r.shards
	}
	if r.channels == nil {
		r.channels = map[string]map[*outbox]struct{}{}
	}
	return r.channels
}

// outbox is a subscribed connection's pending output and its
// subscriptions. Its bytes up to released are due at notBefore (the
// virtual clock's finish of the command that queued the last of them);
// bytes past released belong to a command still executing.
type outbox struct {
	srv *Server
	cl  *client
	// nc is the connection's socket (nil for a client without one, as
	// the fuzz harness drives: its deliveries are dropped).
	nc net.Conn
	// subs are its subscriptions by kind (' ' channels, 'p' patterns, 's'
	// sharded), under Server.mu.
	subs map[byte]map[string]struct{}

	mu        sync.Mutex
	out       []byte
	released  int
	notBefore int64
	closed    bool
	wake      chan struct{}
}

// count is how many subscriptions the connection holds. Call with
// Server.mu held.
func (o *outbox) count() int {
	n := 0
	for _, m := range o.subs {
		n += len(m)
	}
	return n
}

// outboxOf returns the connection's outbox, starting it (and its writer)
// on the first subscription or CLIENT TRACKING ON.
func (c *client) outboxOf() *outbox {
	if c.box == nil {
		b := &outbox{srv: c.srv, cl: c, subs: map[byte]map[string]struct{}{}, wake: make(chan struct{}, 1)}
		c.box = b
		if c.cn != nil {
			b.nc = c.cn.nc
			c.srv.conns.Add(1)
			go b.write()
		}
	}
	return c.box
}

// push appends bytes to the outbox, past what is released. It reports
// false when the outbox outgrew its limit: the connection is then closed.
// Call with Server.mu held.
func (o *outbox) push(b []byte) bool {
	limit := o.srv.cfg.MaxOutputBuffer
	if o.count() > 0 {
		limit = o.srv.cfg.MaxPubsubBuffer
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	if o.nc == nil {
		return true // no socket: nothing to deliver to
	}
	if len(o.out)+len(b) > limit {
		o.closed = true
		o.nc.Close() // as Redis: the client is dropped, its pending output with it
		o.out, o.released = nil, 0
		return false
	}
	o.out = append(o.out, b...)
	return true
}

// release makes everything pushed so far due at done. Call with
// Server.mu held, right after the command's batch finished on the virtual
// clock, so nothing of a later command is released with it.
func (o *outbox) release(done int64) {
	o.mu.Lock()
	o.released = len(o.out)
	o.notBefore = max(o.notBefore, done)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// close ends the writer.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// write is the outbox's writer: it waits for released bytes, sleeps until
// they are due and writes them.
func (o *outbox) write() {
	defer o.srv.conns.Done()
	var chunk []byte
	for {
		select {
		case <-o.wake:
		case <-o.srv.quit:
			return
		}
		for {
			o.mu.Lock()
			if o.closed {
				o.mu.Unlock()
				return
			}
			if o.released == 0 {
				o.mu.Unlock()
				break
			}
			chunk = append(chunk[:0], o.out[:o.released]...)
			due := o.notBefore
			o.out = o.out[:copy(o.out, o.out[o.released:])]
			o.released = 0
			if cap(o.out) > keepOutput && len(o.out) < keepOutput/4 {
				o.out = append([]byte(nil), o.out...)
			}
			o.mu.Unlock()
			if due > now() && !o.srv.sleepUntil(due) {
				return
			}
			if _, err := o.nc.Write(chunk); err != nil {
				o.nc.Close()
				return
			}
			if cap(chunk) > keepOutput {
				chunk = nil
			}
		}
	}
}

// pushHeader appends a push's header: RESP3's > or RESP2's array.
func (c *client) pushHeader(n int) {
	if c.proto == 3 {
		c.line('>', int64(n))
		return
	}
	c.array(n)
}

// subscribe runs SUBSCRIBE (kind ' '), PSUBSCRIBE ('p') or SSUBSCRIBE
// ('s'): each name is added and confirmed.
func subscribe(kind byte, confirm string) func(*client, [][]byte) {
	return func(c *client, a [][]byte) {
		b := c.outboxOf()
		reg := c.srv.pubsub.of(kind)
		mine := b.subs[kind]
		if mine == nil {
			mine = map[string]struct{}{}
			b.subs[kind] = mine
		}
		for _, name := range a[1:] {
			n := string(name)
			if _, ok := mine[n]; !ok {
				mine[n] = struct{}{}
				if reg[n] == nil {
					reg[n] = map[*outbox]struct{}{}
				}
				reg[n][b] = struct{}{}
			}
			c.pushHeader(3)
			c.bulkString(confirm)
			c.bulk(name)
			c.integer(int64(b.count()))
		}
	}
}

// unsubscribe runs UNSUBSCRIBE, PUNSUBSCRIBE or SUNSUBSCRIBE: the names
// given, or every one of the kind.
func unsubscribe(kind byte, confirm string) func(*client, [][]byte) {
	return func(c *client, a [][]byte) {
		var names []string
		var mine map[string]struct{}
		if c.box != nil {
			mine = c.box.subs[kind]
		}
		if len(a) > 1 {
			for _, n := range a[1:] {
				names = append(names, string(n))
			}
		} else {
			for n := range mine {
				names = append(names, n)
			}
			sort.Strings(names)
		}
		if len(names) == 0 {
			c.pushHeader(3)
			c.bulkString(confirm)
			c.null()
			c.integer(0)
			return
		}
		for _, n := range names {
			if _, ok := mine[n]; ok {
				delete(mine, n)
				c.srv.unregister(kind, n, c.box)
			}
			c.pushHeader(3)
			c.bulkString(confirm)
			c.bulkString(n)
			cnt := 0
			if c.box != nil {
				cnt = c.box.count()
			}
			c.integer(int64(cnt))
		}
	}
}

// unregister removes b from the subscribers of name. Call with mu held.
func (s *Server) unregister(kind byte, name string, b *outbox) {
	reg := s.pubsub.of(kind)
	if m := reg[name]; m != nil {
		delete(m, b)
		if len(m) == 0 {
			delete(reg, name)
		}
	}
}

// dropSubscriptions forgets every subscription of a connection that
// ended. Call with mu held.
func (s *Server) dropSubscriptions(b *outbox) {
	for kind, names := range b.subs {
		for n := range names {
			s.unregister(kind, n, b)
		}
	}
	b.subs = map[byte]map[string]struct{}{}
}

// publish runs PUBLISH (sharded false) or SPUBLISH: the message goes to
// every subscriber of the channel (and, unsharded, of every matching
// pattern); the reply counts them.
func publish(sharded bool) func(*client, [][]byte) {
	return func(c *client, a [][]byte) {
		ch, msg := a[1], a[2]
		n := 0
		kind := byte(' ')
		if sharded {
			kind = 's'
		}
		for b := range c.srv.pubsub.of(kind)[string(ch)] {
			if c.deliver(b, nil, ch, msg, sharded) {
				n++
			}
		}
		if !sharded {
			for pat, subs := range c.srv.pubsub.of('p') {
				if !globMatch([]byte(pat), ch) {
					continue
				}
				for b := range subs {
					if c.deliver(b, []byte(pat), ch, msg, false) {
						n++
					}
				}
			}
		}
		c.integer(int64(n))
	}
}

// deliver appends a message to b's outbox in b's protocol and notes b for
// release when the publisher's batch finishes; false when b was dropped.
func (c *client) deliver(b *outbox, pattern, ch, msg []byte, sharded bool) bool {
	enc := &c.srv.scratch
	enc.out, enc.proto = enc.out[:0], b.cl.proto
	switch {
	case pattern != nil:
		enc.pushHeader(4)
		enc.bulkString("pmessage")
		enc.bulk(pattern)
	case sharded:
		enc.pushHeader(3)
		enc.bulkString("smessage")
	default:
		enc.pushHeader(3)
		enc.bulkString("message")
	}
	enc.bulk(ch)
	enc.bulk(msg)
	if !b.push(enc.out) {
		// Dropped (or dropping): as Redis, it receives nothing more, and
		// PUBSUB no longer counts it.
		c.srv.dropSubscriptions(b)
		return false
	}
	c.touched = append(c.touched, b)
	return true
}

// cmdPubsub answers PUBSUB CHANNELS, NUMSUB, NUMPAT and SHARDCHANNELS.
func cmdPubsub(c *client, a [][]byte) {
	reg := &c.srv.pubsub
	switch sub := a[1]; {
	case is(sub, "CHANNELS"), is(sub, "SHARDCHANNELS"):
		m := reg.of(' ')
		if is(sub, "SHARDCHANNELS") {
			m = reg.of('s')
		}
		var names []string
		for n := range m {
			if len(a) < 3 || globMatch(a[2], []byte(n)) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		c.array(len(names))
		for _, n := range names {
			c.bulkString(n)
		}
	case is(sub, "NUMSUB"), is(sub, "SHARDNUMSUB"):
		m := reg.of(' ')
		if is(sub, "SHARDNUMSUB") {
			m = reg.of('s')
		}
		c.mapHeader(len(a) - 2)
		for _, n := range a[2:] {
			c.bulk(n)
			c.integer(int64(len(m[string(n)])))
		}
	case is(sub, "NUMPAT"):
		c.integer(int64(len(reg.of('p'))))
	default:
		c.unknownSubcommand(sub, "PUBSUB")
	}
}

// subscribedOK reports whether a RESP2 connection in subscribed mode may
// run the command, or answers Redis's refusal.
func (c *client) subscribedOK(name []byte) bool {
	if c.proto == 3 || c.box == nil || c.box.count() == 0 {
		return true
	}
	for _, ok := range []string{"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE", "PING", "QUIT", "RESET"} {
		if is(name, ok) {
			return true
		}
	}
	c.errorf("ERR Can't execute '" + string(lower(name)) + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	return false
}

// lower returns b in lower case (a copy).
func lower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}

// flushToBox moves a subscribed connection's replies into its outbox,
// behind the deliveries queued before them, and releases every outbox
// the batch delivered to at done. Call with Server.mu held, right after
// the batch finished on the virtual clock.
func (c *client) flushToBox(done int64) {
	for _, b := range c.touched {
		b.release(done)
	}
	clear(c.touched)
	c.touched = c.touched[:0]
	if c.box != nil && len(c.out) > 0 {
		c.box.push(c.out)
		c.box.release(done)
		c.out = c.out[:0]
	}
}

// endPubsub drops a closing connection's subscriptions and stops its
// outbox's writer.
func (s *Server) endPubsub(c *client) {
	if c.box == nil {
		return
	}
	s.mu.Lock()
	s.dropSubscriptions(c.box)
	s.mu.Unlock()
	c.box.close()
}

func now() int64 { return clock.Now() }
