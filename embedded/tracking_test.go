package embedded

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// invalidation is the RESP3 push that invalidates keys.
func invalidation(keys ...string) string {
	s := ">2\r\n$10\r\ninvalidate\r\n*" + itoa(len(keys)) + "\r\n"
	for _, k := range keys {
		s += "$" + itoa(len(k)) + "\r\n" + k + "\r\n"
	}
	return s
}

// trackingClient dials a RESP3 connection and turns tracking on with opts.
func trackingClient(t *testing.T, srv *Server, opts ...string) *session {
	t.Helper()
	s := dial(t, srv)
	s.do("HELLO", "3")
	if got := s.do(append([]string{"CLIENT", "TRACKING", "ON"}, opts...)...); got != "+OK\r\n" {
		t.Fatalf("CLIENT TRACKING ON %v: %q", opts, got)
	}
	return s
}

// quiet checks that nothing waits on s before the reply to a PING sent
// now: every command whose reply the test read executed before it, so
// an invalidation it caused would come first.
func (s *session) quiet() {
	s.t.Helper()
	if got := s.do("PING"); got != "+PONG\r\n" {
		s.t.Fatalf("want no invalidation, got %q", got)
	}
}

// TestTrackingDefaultMode: a read remembers the key, a missing one too;
// another client's write sends one invalidation and forgets it, so a
// second write sends nothing until the key is read again.
func TestTrackingDefaultMode(t *testing.T) {
	srv := start(t, Faults{})
	r, w := trackingClient(t, srv), dial(t, srv)
	if got := r.do("GET", "k"); got != "_\r\n" {
		t.Fatalf("GET of a missing key: %q", got)
	}
	w.do("SET", "k", "v")
	if got := r.reply(); got != invalidation("k") {
		t.Fatalf("after SET: %q", got)
	}
	w.do("SET", "k", "w")
	r.quiet()
	if got := r.do("GET", "k"); got != "$1\r\nw\r\n" {
		t.Fatalf("GET: %q", got)
	}
	w.do("DEL", "k")
	if got := r.reply(); got != invalidation("k") {
		t.Fatalf("after DEL: %q", got)
	}
	// Every read key, one push each; a key nobody read sends nothing.
	r.do("MGET", "a", "b")
	w.do("MSET", "b", "1", "c", "2", "a", "3")
	for _, k := range []string{"b", "a"} {
		if got := r.reply(); got != invalidation(k) {
			t.Fatalf("after MSET, want %q: %q", k, got)
		}
	}
	r.quiet()
	// Two readers, one push each.
	r2 := trackingClient(t, srv)
	r.do("GET", "k")
	r2.do("GET", "k")
	w.do("INCR", "k")
	for _, s := range []*session{r, r2} {
		if got := s.reply(); got != invalidation("k") {
			t.Fatalf("after INCR: %q", got)
		}
	}
}

// TestTrackingWriteCommands: every write command that changes a key
// invalidates it, and one that changes nothing (as Redis decides) does
// not; every read command remembers its key.
func TestTrackingWriteCommands(t *testing.T) {
	srv := start(t, Faults{})
	w := dial(t, srv)
	for _, tc := range []struct {
		setup, read, write []string
		push               bool
	}{
		{nil, []string{"GET", "k"}, []string{"SET", "k", "v"}, true},
		{[]string{"SET", "k", "v"}, []string{"GET", "k"}, []string{"SET", "k", "w", "NX"}, false},
		{[]string{"SET", "k", "v"}, []string{"GET", "k"}, []string{"SET", "k", "w", "XX"}, true},
		{[]string{"SET", "k", "v"}, []string{"GET", "k"}, []string{"SET", "k", "v"}, true},
		{[]string{"SET", "k", "1"}, []string{"STRLEN", "k"}, []string{"INCR", "k"}, true},
		{nil, []string{"GET", "k"}, []string{"DECRBY", "k", "5"}, true},
		{[]string{"SET", "k", "v"}, []string{"GET", "k"}, []string{"APPEND", "k", "x"}, true},
		{[]string{"SET", "k", "v"}, []string{"MGET", "x", "k"}, []string{"GETSET", "k", "w"}, true},
		{nil, []string{"GET", "k"}, []string{"MSET", "a", "1", "k", "2"}, true},
		{[]string{"SET", "k", "v"}, []string{"EXISTS", "k"}, []string{"DEL", "k"}, true},
		{nil, []string{"EXISTS", "k"}, []string{"DEL", "k"}, false},
		{[]string{"SET", "k", "v"}, []string{"TYPE", "k"}, []string{"UNLINK", "k"}, true},
		{nil, []string{"LRANGE", "k", "0", "-1"}, []string{"LPUSH", "k", "a"}, true},
		{[]string{"RPUSH", "k", "a", "b"}, []string{"LLEN", "k"}, []string{"RPOP", "k"}, true},
		{[]string{"RPUSH", "k", "a"}, []string{"LLEN", "k"}, []string{"LPOP", "k"}, true},
		{[]string{"RPUSH", "k", "a"}, []string{"LLEN", "k"}, []string{"LPOP", "k", "0"}, false},
		{nil, []string{"HGET", "k", "f"}, []string{"HSET", "k", "f", "v"}, true},
		{[]string{"HSET", "k", "f", "v"}, []string{"HGETALL", "k"}, []string{"HMSET", "k", "f", "v"}, true},
		{[]string{"HSET", "k", "f", "v"}, []string{"HLEN", "k"}, []string{"HSET", "k", "f", "w"}, true},
		{[]string{"SADD", "k", "a"}, []string{"SMEMBERS", "k"}, []string{"SADD", "k", "a"}, false},
		{[]string{"SADD", "k", "a"}, []string{"SISMEMBER", "k", "a"}, []string{"SADD", "k", "b"}, true},
		{[]string{"SADD", "k", "a"}, []string{"SCARD", "k"}, []string{"SREM", "k", "x"}, false},
		{[]string{"SADD", "k", "a"}, []string{"SCARD", "k"}, []string{"SREM", "k", "a"}, true},
		{[]string{"SADD", "k", "a"}, []string{"SCARD", "k"}, []string{"SPOP", "k"}, true},
		{[]string{"SADD", "k", "a"}, []string{"SCARD", "k"}, []string{"SPOP", "k", "0"}, false},
		{[]string{"ZADD", "k", "1", "a"}, []string{"ZSCORE", "k", "a"}, []string{"ZADD", "k", "1", "a"}, false},
		{[]string{"ZADD", "k", "1", "a"}, []string{"ZCARD", "k"}, []string{"ZADD", "k", "2", "a"}, true},
		{[]string{"ZADD", "k", "1", "a"}, []string{"ZCARD", "k"}, []string{"ZPOPMIN", "k"}, true},
		{nil, []string{"XLEN", "k"}, []string{"XADD", "k", "*", "f", "v"}, true},
		{[]string{"XADD", "k", "1-1", "f", "v"}, []string{"XRANGE", "k", "-", "+"}, []string{"XDEL", "k", "9-9"}, false},
		{[]string{"XADD", "k", "1-1", "f", "v"}, []string{"XRANGE", "k", "-", "+"}, []string{"XDEL", "k", "1-1"}, true},
		{[]string{"XADD", "k", "1-1", "f", "v"}, []string{"XREAD", "STREAMS", "k", "0"}, []string{"XTRIM", "k", "MAXLEN", "0"}, true},
		{[]string{"XADD", "k", "1-1", "f", "v"}, []string{"XLEN", "k"}, []string{"XTRIM", "k", "MAXLEN", "5"}, false},
		{nil, []string{"XLEN", "k"}, []string{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, true},
		{[]string{"SET", "k", "v"}, []string{"GET", "k"}, []string{"GET", "k"}, false},
	} {
		name := strings.Join(tc.read, " ") + " then " + strings.Join(tc.write, " ")
		w.do("FLUSHALL")
		if len(tc.setup) > 0 {
			w.do(tc.setup...)
		}
		r := trackingClient(t, srv)
		r.do(tc.read...)
		if got := w.do(tc.write...); strings.HasPrefix(got, "-") {
			t.Fatalf("%s: %q", name, got)
		}
		if tc.push {
			if got := r.reply(); got != invalidation("k") {
				t.Errorf("%s: got %q, want the invalidation of k", name, got)
				continue
			}
		}
		if got := r.do("PING"); got != "+PONG\r\n" {
			t.Errorf("%s: got %q, want nothing", name, got)
		}
		r.c.Close()
	}
}

// TestTrackingOwnWrites: a client's own write invalidates what it read,
// after the write's reply, unless it asked for NOLOOP; either way the key
// is forgotten.
func TestTrackingOwnWrites(t *testing.T) {
	srv := start(t, Faults{})
	r, w := trackingClient(t, srv), dial(t, srv)
	if _, err := r.c.Write([]byte(encode("GET", "k") + encode("SET", "k", "v") + encode("GET", "k"))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"_\r\n", "+OK\r\n", invalidation("k"), "$1\r\nv\r\n"} {
		if got := r.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}

	n := trackingClient(t, srv, "NOLOOP")
	n.do("GET", "k")
	n.do("SET", "k", "w")
	n.quiet()
	w.do("SET", "k", "x") // forgotten by its own write
	n.quiet()
	n.do("GET", "k")
	w.do("SET", "k", "y")
	if got := n.reply(); got != invalidation("k") {
		t.Fatalf("NOLOOP, another client's write: %q", got)
	}
}

// TestTrackingBcast: a BCAST client is sent every modified key that
// starts with one of its prefixes, without reading it: one push per
// command, keys sorted and once each.
func TestTrackingBcast(t *testing.T) {
	srv := start(t, Faults{})
	b := trackingClient(t, srv, "BCAST", "PREFIX", "user:", "PREFIX", "sess:")
	all := trackingClient(t, srv, "BCAST", "NOLOOP")
	w := dial(t, srv)
	w.do("SET", "user:1", "x")
	if got := b.reply(); got != invalidation("user:1") {
		t.Fatalf("SET user:1: %q", got)
	}
	w.do("SET", "other", "x")
	b.quiet()
	w.do("MSET", "user:2", "a", "sess:9", "b", "other", "c", "user:2", "d")
	if got := b.reply(); got != invalidation("sess:9", "user:2") {
		t.Fatalf("MSET: %q", got)
	}
	b.do("GET", "user:3") // not remembered: BCAST does not track reads
	w.do("DEL", "user:1", "user:3")
	if got := b.reply(); got != invalidation("user:1") {
		t.Fatalf("DEL: %q", got)
	}
	b.quiet()
	// No prefix: every key, in the order the writes happened.
	for _, want := range []string{invalidation("user:1"), invalidation("other"), invalidation("other", "sess:9", "user:2"), invalidation("user:1")} {
		if got := all.reply(); got != want {
			t.Fatalf("BCAST without a prefix: got %q, want %q", got, want)
		}
	}
	all.do("SET", "mine", "1") // NOLOOP
	all.quiet()
	// Without NOLOOP, its own write comes back after the reply.
	if got := b.do("SET", "user:7", "1"); got != "+OK\r\n" {
		t.Fatalf("%q", got)
	}
	if got := b.reply(); got != invalidation("user:7") {
		t.Fatalf("own write in BCAST: %q", got)
	}
	if got := all.reply(); got != invalidation("user:7") {
		t.Fatalf("%q", got)
	}
}

// TestTrackingFlush: FLUSHALL and FLUSHDB send every tracking client a
// null key list, its own issuer after the reply, and empty the table.
func TestTrackingFlush(t *testing.T) {
	srv := start(t, Faults{})
	r, b, w := trackingClient(t, srv), trackingClient(t, srv, "BCAST"), dial(t, srv)
	r.do("GET", "k")
	w.do("FLUSHALL")
	for _, s := range []*session{r, b} {
		if got := s.reply(); got != flushPush {
			t.Fatalf("after FLUSHALL: %q", got)
		}
	}
	if got := w.do("INFO", "stats"); !strings.Contains(got, "tracking_total_keys:0\r\ntracking_total_items:0\r\n") {
		t.Fatalf("the table after FLUSHALL: %q", got)
	}
	w.do("SET", "k", "v")
	r.quiet() // forgotten with the table
	if got := b.reply(); got != invalidation("k") {
		t.Fatalf("BCAST after FLUSHALL: %q", got)
	}
	if got := r.do("FLUSHDB"); got != "+OK\r\n" {
		t.Fatalf("FLUSHDB: %q", got)
	}
	if got := r.reply(); got != flushPush {
		t.Fatalf("own FLUSHDB: %q", got)
	}
	if got := b.reply(); got != flushPush {
		t.Fatalf("FLUSHDB: %q", got)
	}
}

// TestTrackingRESP2: a RESP2 connection may turn tracking on, but its
// invalidations are dropped (Redis sends them only with REDIRECT): its
// replies stay clean, and after HELLO 3 it gets them.
func TestTrackingRESP2(t *testing.T) {
	srv := start(t, Faults{})
	r, w := dial(t, srv), dial(t, srv)
	if got := r.do("CLIENT", "TRACKING", "on"); got != "+OK\r\n" {
		t.Fatalf("%q", got)
	}
	r.do("GET", "k")
	w.do("SET", "k", "v")
	if got := r.do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET after an invalidation dropped: %q", got)
	}
	w.do("FLUSHALL")
	if got := r.do("SET", "k", "w"); got != "+OK\r\n" {
		t.Fatalf("%q", got)
	}
	r.quiet()
	r.do("GET", "k")
	r.do("HELLO", "3")
	w.do("SET", "k", "x")
	if got := r.reply(); got != invalidation("k") {
		t.Fatalf("after HELLO 3: %q", got)
	}
}

// TestTrackingOff: CLIENT TRACKING OFF stops the invalidations and
// forgets the client's keys.
func TestTrackingOff(t *testing.T) {
	srv := start(t, Faults{})
	r, b, w := trackingClient(t, srv), trackingClient(t, srv, "BCAST"), dial(t, srv)
	r.do("MGET", "a", "b")
	for _, s := range []*session{r, b} {
		if got := s.do("CLIENT", "TRACKING", "off"); got != "+OK\r\n" {
			t.Fatalf("%q", got)
		}
	}
	if got := w.do("INFO", "stats"); !strings.Contains(got, "tracking_total_keys:0\r\ntracking_total_items:0\r\ntracking_total_prefixes:0\r\n") {
		t.Fatalf("after OFF: %q", got)
	}
	w.do("MSET", "a", "1", "b", "2")
	w.do("FLUSHALL")
	r.quiet()
	b.quiet()
}

// TestTrackingCloseFreesEntries: a tracking client that closes its
// connection is removed from the table; the others stay.
func TestTrackingCloseFreesEntries(t *testing.T) {
	srv := start(t, Faults{})
	r, other, b, w := trackingClient(t, srv), trackingClient(t, srv), trackingClient(t, srv, "BCAST", "PREFIX", "x"), dial(t, srv)
	r.do("MGET", "a", "b", "c")
	other.do("GET", "a")
	if got := w.do("INFO", "stats"); !strings.Contains(got, "tracking_total_keys:3\r\ntracking_total_items:4\r\ntracking_total_prefixes:1\r\n") {
		t.Fatalf("before closing: %q", got)
	}
	r.c.Close()
	b.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := w.do("INFO", "stats")
		if strings.Contains(got, "tracking_total_keys:1\r\ntracking_total_items:1\r\ntracking_total_prefixes:0\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed clients' entries stay: %q", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv.mu.Lock()
	n := len(srv.trk.clients)
	srv.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d tracking clients, want 1", n)
	}
	w.do("SET", "a", "v")
	if got := other.reply(); got != invalidation("a") {
		t.Fatalf("%q", got)
	}
}

// TestTrackingOptInOptOut: OPTIN remembers a read only after CLIENT
// CACHING YES, OPTOUT all but those after CLIENT CACHING NO; either
// holds for the next command.
func TestTrackingOptInOptOut(t *testing.T) {
	srv := start(t, Faults{})
	in, out, w := trackingClient(t, srv, "OPTIN"), trackingClient(t, srv, "OPTOUT"), dial(t, srv)
	in.do("GET", "a")
	if got := in.do("CLIENT", "CACHING", "YES"); got != "+OK\r\n" {
		t.Fatalf("%q", got)
	}
	in.do("GET", "b")
	in.do("GET", "c")
	out.do("CLIENT", "CACHING", "NO")
	out.do("CLIENT", "GETREDIR") // CLIENT commands do not spend it
	out.do("GET", "a")
	out.do("GET", "c")
	w.do("MSET", "a", "1", "b", "2", "c", "3")
	if got := in.reply(); got != invalidation("b") {
		t.Fatalf("OPTIN: %q", got)
	}
	in.quiet()
	if got := out.reply(); got != invalidation("c") {
		t.Fatalf("OPTOUT: %q", got)
	}
	out.quiet()
}

// TestTrackingErrors: CLIENT TRACKING's options are checked as Redis
// checks them, and CLIENT TRACKINGINFO and GETREDIR report the state.
func TestTrackingErrors(t *testing.T) {
	srv := start(t, Faults{})
	c := dial(t, srv)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "TRACKING"}, "-ERR wrong number of arguments for 'client|tracking' command\r\n"},
		{[]string{"CLIENT", "TRACKING", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "fast"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "PREFIX", "a"}, "-ERR PREFIX option requires BCAST mode to be enabled\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "OPTIN"}, "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"}, "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab"}, "-ERR Prefix 'a' overlaps with another provided prefix 'ab'. Prefixes for a single client must not overlap.\r\n"},
		{[]string{"CLIENT", "CACHING", "YES"}, "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n"},
		{[]string{"CLIENT", "GETREDIR"}, ":-1\r\n"},
		{[]string{"CLIENT", "TRACKINGINFO"}, "*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a"}, "+OK\r\n"},
		{[]string{"CLIENT", "TRACKING", "on"}, "-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "abc"}, "-ERR Prefix 'abc' overlaps with an existing prefix 'a'. Prefixes for a single client must not overlap.\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c", "NOLOOP"}, "+OK\r\n"},
		{[]string{"CLIENT", "CACHING", "YES"}, "-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n"},
		{[]string{"CLIENT", "TRACKINGINFO"}, "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{[]string{"CLIENT", "GETREDIR"}, ":0\r\n"},
		{[]string{"CLIENT", "TRACKING", "off"}, "+OK\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTIN"}, "+OK\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTOUT"}, "-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n"},
		{[]string{"CLIENT", "CACHING", "NO"}, "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n"},
		{[]string{"CLIENT", "CACHING", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "CACHING", "YES"}, "+OK\r\n"},
		{[]string{"CLIENT", "TRACKINGINFO"}, "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n"},
		{[]string{"CLIENT", "TRACKINGINFO", "x"}, "-ERR wrong number of arguments for 'client|trackinginfo' command\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := c.do("CLIENT", "TRACKING", "on", "REDIRECT", "7"); !strings.HasPrefix(got, "-ERR the embedded target does not support CLIENT TRACKING REDIRECT") {
		t.Errorf("REDIRECT: %q", got)
	}
}

// TestTrackingTableLimit: past MaxTrackedKeys a key is forgotten, and its
// reader is told, after the reply to the read that added one too many.
func TestTrackingTableLimit(t *testing.T) {
	srv, err := Start(Config{MaxTrackedKeys: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r, w := trackingClient(t, srv), dial(t, srv)
	if got := w.do("CONFIG", "GET", "tracking-table-max-keys"); got != "*2\r\n$23\r\ntracking-table-max-keys\r\n$1\r\n2\r\n" {
		t.Fatalf("CONFIG GET: %q", got)
	}
	r.do("GET", "a")
	r.do("GET", "b")
	if got := r.do("GET", "c"); got != "_\r\n" {
		t.Fatalf("%q", got)
	}
	got := r.reply()
	evicted := ""
	for _, k := range []string{"a", "b", "c"} {
		if got == invalidation(k) {
			evicted = k
		}
	}
	if evicted == "" {
		t.Fatalf("want an eviction, got %q", got)
	}
	if got := w.do("INFO", "stats"); !strings.Contains(got, "tracking_total_keys:2\r\n") {
		t.Fatalf("%q", got)
	}
	w.do("SET", evicted, "v")
	r.quiet()
}

// TestStallHoldsInvalidations: a write during a stall invalidates when
// the stall ends, as the write's reply does, and the invalidation comes
// before the reply to a read the tracking client sent after the write.
func TestStallHoldsInvalidations(t *testing.T) {
	srv := start(t, Faults{Stall: 150 * time.Millisecond, Every: 300 * time.Millisecond})
	r, w := trackingClient(t, srv), dial(t, srv)
	r.do("GET", "k")
	now := clock.Now()
	var stall [2]int64
	for _, s := range srv.stallsBetween(now, now+int64(time.Second)) {
		if s[0] > now {
			stall = s
			break
		}
	}
	clock.SleepUntil(stall[0] + int64(20*time.Millisecond))
	before := srv.Processed()
	if _, err := w.c.Write([]byte(encode("SET", "k", "v"))); err != nil {
		t.Fatal(err)
	}
	for srv.Processed() == before { // executed, its reply held by the stall
		time.Sleep(time.Millisecond)
	}
	if _, err := r.c.Write([]byte(encode("GET", "j"))); err != nil {
		t.Fatal(err)
	}
	if got := r.reply(); got != invalidation("k") {
		t.Fatalf("%q", got)
	}
	if got := clock.Now(); got < stall[1] {
		t.Fatalf("invalidated %v before the stall's end", time.Duration(stall[1]-got))
	}
	if got := r.reply(); got != "_\r\n" {
		t.Fatalf("GET j: %q", got)
	}
	if got := w.reply(); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
}

// TestInvalidationFollowsTheRead: with a delay, a read's reply is still
// pending when another client's write invalidates the key it read; the
// invalidation waits behind it on the tracking client's socket.
func TestInvalidationFollowsTheRead(t *testing.T) {
	srv := start(t, Faults{Delay: Delay{Kind: DelayFixed, A: 50 * time.Millisecond}})
	r, w := trackingClient(t, srv), dial(t, srv)
	before := srv.Processed()
	if _, err := r.c.Write([]byte(encode("GET", "k"))); err != nil {
		t.Fatal(err)
	}
	for srv.Processed() == before {
		time.Sleep(time.Millisecond)
	}
	if _, err := w.c.Write([]byte(encode("SET", "k", "v"))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"_\r\n", invalidation("k")} {
		if got := r.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if got := w.reply(); got != "+OK\r\n" {
		t.Fatalf("%q", got)
	}
}

// checkTracking checks that the table and the clients' own lists of
// their keys agree, and that no command left work behind.
func (s *Server) checkTracking(t *testing.T) {
	t.Helper()
	items := 0
	for k, readers := range s.trk.keys {
		if len(readers) == 0 {
			t.Errorf("key %q has no readers", k)
		}
		for r := range readers {
			items++
			if r.track == nil || !r.track.on || r.track.bcast {
				t.Errorf("key %q remembered for a client not tracking in the default mode", k)
			} else if _, ok := r.track.keys[k]; !ok {
				t.Errorf("key %q missing from its reader's keys", k)
			}
		}
	}
	if items != s.trk.items {
		t.Errorf("items %d, recount %d", s.trk.items, items)
	}
	for c := range s.trk.clients {
		for k := range c.track.keys {
			if _, ok := s.trk.keys[k][c]; !ok {
				t.Errorf("client's key %q missing from the table", k)
			}
		}
		if _, ok := s.trk.bcast[c]; ok != c.track.bcast {
			t.Errorf("BCAST %v, in the BCAST set %v", c.track.bcast, ok)
		}
	}
	if s.trk.dirty || len(s.trk.self) > 0 || len(s.trk.changed) > 0 {
		t.Error("a command left tracking work behind")
	}
}
