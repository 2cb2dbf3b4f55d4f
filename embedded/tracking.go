package embedded

// Client-side caching: CLIENT TRACKING (with TRACKINGINFO, CACHING and
// GETREDIR), as Redis 7.0 does it (src/tracking.c).
//
// In the default mode the server remembers which clients read each key:
// a read-only command of a tracking client remembers the keys it names,
// present or not, whatever it answered. When any client modifies a key,
// each client that read it gets one invalidation and is forgotten for
// that key until it reads it again. The table is keyed by name alone, not
// by database, as Redis's is. In BCAST mode nothing is remembered: every
// modified key that starts with one of the client's prefixes (none: every
// key) is sent to it. NOLOOP spares a client the invalidations of its own
// writes; FLUSHALL and FLUSHDB send every tracking client a null key list
// and empty the table. A write invalidates when it changes the key, as
// Redis's signalModifiedKey calls decide: setKey and delKey signal, and
// commands that change a value in place call modified; a SADD of present
// members, a SREM of absent ones, an unchanged ZADD, an XDEL or XTRIM
// that removes nothing, a SET NX that does not set, signal nothing. OPTIN and OPTOUT work with CLIENT CACHING as in
// Redis; REDIRECT is refused: invalidations reach RESP3 connections only
// (a RESP2 client's are dropped, as Redis drops them without a redirect).
//
// Where the embedded target differs from Redis, and why:
//   - BCAST invalidations are batched per command, not per event loop: a
//     client gets one push per command that modified keys of its prefixes,
//     with those keys sorted (Redis sends the keys of a whole event-loop
//     iteration, per prefix). The embedded target has no event loop to end.
//   - CLIENT TRACKING OFF and a closed connection remove the client from
//     the table at once (Redis forgets its IDs lazily), so the table holds
//     nothing for clients that stopped tracking.
//   - The table's bound (Config.MaxTrackedKeys, Redis's
//     tracking-table-max-keys) is enforced as a read adds a key, not
//     before the event loop sleeps.
//   - A ZADD XX or an XADD whose ID is refused, on a missing key, creates
//     and deletes the key here, so it invalidates it; Redis does not.
//
// An invalidation travels as a pub/sub delivery does (pubsub.go): a RESP3
// tracking connection has an outbox, its replies go through it, and an
// invalidation is appended to it when the modifying command executes and
// written no earlier than the virtual clock's finish of that command's
// batch, so stalls and delays hold invalidations as they hold replies:
//
//	tracking client T               server (one lock)                  client W
//	GET k ──────────────▶ run GET: reply → T.out, k remembered for T
//	                      T's batch ends: T.out → T's outbox, due d1
//	                                                          ◀─────── SET k
//	                      run SET: push "invalidate [k]" → T's outbox
//	                      W's batch ends: T's outbox released at d2
//	◀── $v at d1, then >2 invalidate [k] at max(d1, d2): one writer, in order
//
// An invalidation a client causes itself (without NOLOOP) follows that
// command's reply on its own output, as Redis 7 sends it after the reply.
// A tracking connection's pending output is bounded by
// Config.MaxOutputBuffer (Redis counts it a normal client), or by
// Config.MaxPubsubBuffer once it subscribes; as with a RESP3 subscriber,
// its connection goes on reading while its outbox holds output, so a
// client that pipelines without reading is disconnected at the bound
// rather than no longer read.

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
)

// DefaultMaxTrackedKeys is Config.MaxTrackedKeys's default: Redis's
// tracking-table-max-keys.
const DefaultMaxTrackedKeys = 1_000_000

// tracking is the server's client-side caching state, under Server.mu.
type tracking struct {
	// keys are the clients that read each key in the default mode; items
	// counts the pairs (INFO tracking_total_items).
	keys  map[string]map[*client]struct{}
	items int
	// clients are the connections with tracking on; bcast those of them
	// in BCAST mode.
	clients map[*client]struct{}
	bcast   map[*client]struct{}

	// What the running command left to send once it is done: the keys it
	// modified, for BCAST clients (copies in arena), and the invalidations
	// of its own client, which follow its reply. dirty: either is there.
	changed [][]byte
	arena   []byte
	self    []byte
	dirty   bool
	enc     []byte // encodes one invalidation
}

// tracker is one connection's CLIENT TRACKING state.
type tracker struct {
	on, bcast, noloop, optin, optout bool
	// caching is CLIENT CACHING's answer for the next command that is not
	// CLIENT; spent is set once that command started.
	caching, spent bool
	prefixes       []string            // BCAST, sorted
	keys           map[string]struct{} // the keys the table remembers it for
}

// wants reports whether a read is remembered: OPTIN only after CLIENT
// CACHING YES, OPTOUT unless after CLIENT CACHING NO.
func (tr *tracker) wants() bool {
	return !(tr.optin && !tr.caching) && !(tr.optout && tr.caching)
}

// matches reports whether key starts with one of the prefixes.
func (tr *tracker) matches(key []byte) bool {
	for _, p := range tr.prefixes {
		if len(key) >= len(p) && string(key[:len(p)]) == p {
			return true
		}
	}
	return false
}

// flushPush is the invalidation of every key.
const flushPush = ">2\r\n$10\r\ninvalidate\r\n_\r\n"

// appendPushHeader starts an invalidation of n keys.
func appendPushHeader(b []byte, n int) []byte {
	b = append(b, ">2\r\n$10\r\ninvalidate\r\n*"...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(append(append(b, '\r', '\n'), s...), '\r', '\n')
	return b
}

// clientTracking answers CLIENT TRACKING, TRACKINGINFO, CACHING and
// GETREDIR.
func clientTracking(c *client, a [][]byte) {
	tr := c.track
	on := tr != nil && tr.on
	switch sub := a[1]; {
	case is(sub, "TRACKING"):
		if len(a) < 3 {
			c.wrongArgs("client|tracking")
			return
		}
		c.trackingCommand(a)
	case is(sub, "CACHING"):
		switch {
		case len(a) != 3:
			c.wrongArgs("client|caching")
		case !on:
			c.errorf("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		case is(a[2], "YES") && !tr.optin:
			c.errorf("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
		case is(a[2], "NO") && !tr.optout:
			c.errorf("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
		case is(a[2], "YES"), is(a[2], "NO"):
			tr.caching, tr.spent = true, false
			c.simple("OK")
		default:
			c.errorRaw(errSyntax)
		}
	case len(a) != 2:
		c.wrongArgs("client|" + string(lower(sub)))
	case is(sub, "GETREDIR"):
		c.integer(redirectOf(on))
	default: // TRACKINGINFO
		var flags []string
		if on {
			flags = append(flags, "on")
			if tr.bcast {
				flags = append(flags, "bcast")
			}
			if tr.optin {
				flags = append(flags, "optin")
				if tr.caching {
					flags = append(flags, "caching-yes")
				}
			}
			if tr.optout {
				flags = append(flags, "optout")
				if tr.caching {
					flags = append(flags, "caching-no")
				}
			}
			if tr.noloop {
				flags = append(flags, "noloop")
			}
		} else {
			flags = append(flags, "off")
		}
		c.mapHeader(3)
		c.bulkString("flags")
		c.setHeader(len(flags))
		for _, f := range flags {
			c.bulkString(f)
		}
		c.bulkString("redirect")
		c.integer(redirectOf(on))
		c.bulkString("prefixes")
		var prefixes []string
		if on {
			prefixes = tr.prefixes
		}
		c.array(len(prefixes))
		for _, p := range prefixes {
			c.bulkString(p)
		}
	}
}

// redirectOf is CLIENT GETREDIR's answer: -1 without tracking, 0 (no
// redirection) with.
func redirectOf(on bool) int64 {
	if on {
		return 0
	}
	return -1
}

// trackingCommand runs CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]...
// [BCAST] [OPTIN] [OPTOUT] [NOLOOP], with Redis's checks and words.
func (c *client) trackingCommand(a [][]byte) {
	var bcast, optin, optout, noloop bool
	var prefixes []string
	for j := 3; j < len(a); j++ {
		more := j+1 < len(a)
		switch opt := a[j]; {
		case is(opt, "REDIRECT") && more:
			c.errorf("ERR the embedded target does not support CLIENT TRACKING REDIRECT: use RESP3 (HELLO 3) to receive invalidations on the tracking connection")
			return
		case is(opt, "BCAST"):
			bcast = true
		case is(opt, "OPTIN"):
			optin = true
		case is(opt, "OPTOUT"):
			optout = true
		case is(opt, "NOLOOP"):
			noloop = true
		case is(opt, "PREFIX") && more:
			j++
			prefixes = append(prefixes, string(a[j]))
		default:
			c.errorRaw(errSyntax)
			return
		}
	}
	switch {
	case is(a[2], "OFF"):
		c.srv.untrack(c)
		c.simple("OK")
		return
	case !is(a[2], "ON"):
		c.errorRaw(errSyntax)
		return
	}
	tr := c.track
	on := tr != nil && tr.on
	switch {
	case !bcast && len(prefixes) > 0:
		c.errorf("ERR PREFIX option requires BCAST mode to be enabled")
	case on && tr.bcast != bcast:
		c.errorf("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
	case bcast && (optin || optout):
		c.errorf("ERR OPTIN and OPTOUT are not compatible with BCAST")
	case optin && optout:
		c.errorf("ERR You can't specify both OPTIN mode and OPTOUT mode")
	case on && (optin && tr.optout || optout && tr.optin):
		c.errorf("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
	default:
		if bcast && !c.prefixesFit(prefixes) {
			return
		}
		c.enableTracking(bcast, optin, optout, noloop, prefixes)
		c.simple("OK")
	}
}

// prefixesFit checks that no new prefix overlaps (is a prefix of, or
// starts with) another new one or one the client has, or answers Redis's
// error.
func (c *client) prefixesFit(prefixes []string) bool {
	overlap := func(a, b string) bool { n := min(len(a), len(b)); return a[:n] == b[:n] }
	var have []string
	if c.track != nil && c.track.on {
		have = c.track.prefixes
	}
	for i, p := range prefixes {
		for _, h := range have {
			if overlap(h, p) {
				c.errorf("ERR Prefix '" + p + "' overlaps with an existing prefix '" + h + "'. Prefixes for a single client must not overlap.")
				return false
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				c.errorf("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap.")
				return false
			}
		}
	}
	return true
}

// enableTracking turns tracking on, or changes its options: the modes are
// set anew, BCAST prefixes add to those the client has (no prefix: every
// key), and the keys it is remembered for stay.
func (c *client) enableTracking(bcast, optin, optout, noloop bool, prefixes []string) {
	t := &c.srv.trk
	if c.track == nil {
		c.track = &tracker{}
	}
	tr := c.track
	if !tr.on {
		tr.on = true
		if t.clients == nil {
			t.clients = map[*client]struct{}{}
		}
		t.clients[c] = struct{}{}
	}
	tr.bcast, tr.optin, tr.optout, tr.noloop = bcast, optin, optout, noloop
	if bcast {
		if len(prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			if !slices.Contains(tr.prefixes, p) {
				tr.prefixes = append(tr.prefixes, p)
			}
		}
		sort.Strings(tr.prefixes)
		if t.bcast == nil {
			t.bcast = map[*client]struct{}{}
		}
		t.bcast[c] = struct{}{}
	}
	if c.proto == 3 {
		c.outboxOf() // from this command on, its output goes through it
	}
}

// untrack turns a client's tracking off and forgets it everywhere. Call
// with Server.mu held.
func (s *Server) untrack(c *client) {
	tr := c.track
	if tr == nil || !tr.on {
		return
	}
	t := &s.trk
	for k := range tr.keys {
		if m := t.keys[k]; m != nil {
			delete(m, c)
			t.items--
			if len(m) == 0 {
				delete(t.keys, k)
			}
		}
	}
	if len(t.keys) == 0 {
		t.keys = nil // let a large table's memory go
	}
	delete(t.clients, c)
	delete(t.bcast, c)
	*tr = tracker{}
}

// endTracking forgets a closing connection.
func (s *Server) endTracking(c *client) {
	if c.track == nil {
		return
	}
	s.mu.Lock()
	s.untrack(c)
	s.mu.Unlock()
}

// nextCommand spends CLIENT CACHING's answer: it holds for the next
// command that is not CLIENT, and is cleared once that one ran, as
// Redis's resetClient does.
func (tr *tracker) nextCommand(name []byte) {
	if tr.spent {
		tr.caching, tr.spent = false, false
	}
	if tr.caching && !is(name, "CLIENT") {
		tr.spent = true
	}
}

// modified is Redis's signalModifiedKey for client-side caching: call it
// with Server.mu held whenever a command changes key (or creates or
// deletes it). Nothing to do costs two length checks.
func (c *client) modified(key []byte) {
	if t := &c.srv.trk; len(t.keys) > 0 || len(t.bcast) > 0 {
		c.invalidate(key)
	}
}

// invalidate notes key for the BCAST clients and sends its invalidation
// to every client that read it.
func (c *client) invalidate(key []byte) {
	t := &c.srv.trk
	if len(t.bcast) > 0 {
		at := len(t.arena)
		t.arena = append(t.arena, key...)
		t.changed = append(t.changed, t.arena[at:len(t.arena):len(t.arena)])
		t.dirty = true
	}
	c.forget(key, true)
}

// forget drops key from the table, sending each client that read it an
// invalidation; byWrite: c modified it (a NOLOOP c is spared), else the
// table evicts it.
func (c *client) forget(key []byte, byWrite bool) {
	t := &c.srv.trk
	readers, ok := t.keys[string(key)]
	if !ok {
		return
	}
	delete(t.keys, string(key))
	t.items -= len(readers)
	for r := range readers {
		delete(r.track.keys, string(key))
		if r.proto != 3 || byWrite && r == c && r.track.noloop {
			continue
		}
		t.enc = appendBulk(appendPushHeader(t.enc[:0], 1), key)
		c.sendPush(r, t.enc)
	}
}

// sendPush sends an invalidation to r: after the running command's reply
// when r is its own client, else to r's outbox, released when c's batch
// finishes.
func (c *client) sendPush(r *client, msg []byte) {
	t := &c.srv.trk
	if r == c {
		t.self = append(t.self, msg...)
		t.dirty = true
		return
	}
	if r.box == nil {
		return
	}
	if !r.box.push(msg) {
		c.srv.untrack(r) // dropped: it receives nothing more
		return
	}
	c.touched = append(c.touched, r.box)
}

// flushed sends every tracking client the invalidation of all keys and
// empties the table (FLUSHALL, FLUSHDB). Call with Server.mu held.
func (c *client) flushed() {
	t := &c.srv.trk
	for r := range t.clients {
		r.track.keys = nil
		if r.proto == 3 {
			c.sendPush(r, []byte(flushPush))
		}
	}
	t.keys, t.items = nil, 0
}

// afterCommand does the tracking work that follows a command: remember
// the keys a tracking client read, then send the BCAST invalidations and
// those of the client's own writes, after its reply. exec calls it when c
// has tracking state or the command left invalidations.
func (c *client) afterCommand(cmd *command, args [][]byte) {
	t := &c.srv.trk
	if tr := c.track; tr != nil && tr.on {
		if !tr.bcast && cmd.flags&flagReadonly != 0 && tr.wants() {
			c.remember(cmd, args)
		}
		if c.proto == 3 && c.box == nil {
			c.outboxOf() // HELLO 3 after CLIENT TRACKING ON
		}
	}
	if !t.dirty {
		return
	}
	if len(t.changed) > 0 {
		c.broadcast()
	}
	if len(t.self) > 0 && c.proto == 3 {
		c.out = append(c.out, t.self...)
	}
	t.self = t.self[:0]
	if cap(t.self) > keepOutput {
		t.self = nil
	}
	t.dirty = false
}

// remember adds c to the readers of the keys a read-only command named
// (XREAD's after STREAMS), evicting keys past Config.MaxTrackedKeys.
func (c *client) remember(cmd *command, args [][]byte) {
	first, last, step := cmd.firstKey, cmd.lastKey, cmd.step
	if cmd.name == "xread" {
		first, last, step = 0, 0, 1
		for i := 1; i < len(args); i++ {
			if is(args[i], "STREAMS") {
				if n := len(args) - i - 1; n > 0 && n%2 == 0 {
					first, last = i+1, i+n/2
				}
				break
			}
		}
	}
	if first <= 0 || step <= 0 {
		return
	}
	if last < 0 {
		last += len(args)
	}
	for i := first; i <= min(last, len(args)-1); i += step {
		c.rememberKey(args[i])
	}
	t := &c.srv.trk
	for limit := c.srv.cfg.MaxTrackedKeys; limit > 0 && len(t.keys) > limit; {
		for k := range t.keys { // a random key: map iteration starts anywhere
			c.forget([]byte(k), false)
			break
		}
	}
}

func (c *client) rememberKey(key []byte) {
	t, tr := &c.srv.trk, c.track
	readers := t.keys[string(key)]
	if readers == nil {
		if t.keys == nil {
			t.keys = map[string]map[*client]struct{}{}
		}
		readers = map[*client]struct{}{}
		t.keys[string(key)] = readers
	} else if _, ok := readers[c]; ok {
		return
	}
	readers[c] = struct{}{}
	t.items++
	if tr.keys == nil {
		tr.keys = map[string]struct{}{}
	}
	tr.keys[string(key)] = struct{}{}
}

// broadcast sends the keys the command modified to the BCAST clients
// whose prefixes they match: one push per client, keys sorted, none to a
// NOLOOP client for its own writes.
func (c *client) broadcast() {
	t := &c.srv.trk
	slices.SortFunc(t.changed, bytes.Compare)
	keys := slices.CompactFunc(t.changed, bytes.Equal)
	for r := range t.bcast {
		if r.proto != 3 || r == c && r.track.noloop {
			continue
		}
		n := 0
		for _, k := range keys {
			if r.track.matches(k) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		t.enc = appendPushHeader(t.enc[:0], n)
		for _, k := range keys {
			if r.track.matches(k) {
				t.enc = appendBulk(t.enc, k)
			}
		}
		c.sendPush(r, t.enc)
	}
	clear(t.changed[:cap(t.changed)])
	t.changed, t.arena = t.changed[:0], t.arena[:0]
	if cap(t.arena) > keepOutput {
		t.arena, t.changed = nil, nil
	}
	if cap(t.enc) > keepOutput {
		t.enc = nil
	}
}

// trackingStats are INFO's tracking_total_keys, tracking_total_items and
// tracking_total_prefixes.
func (s *Server) trackingStats() (keys, items, prefixes int) {
	seen := map[string]struct{}{}
	for r := range s.trk.bcast {
		for _, p := range r.track.prefixes {
			seen[p] = struct{}{}
		}
	}
	return len(s.trk.keys), s.trk.items, len(seen)
}
