package cluster

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/conn"
)

func TestCRC16(t *testing.T) {
	// The check value of CRC16/XMODEM.
	if got := crc16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
}

func TestSlot(t *testing.T) {
	for _, c := range []struct {
		key  string
		want uint16
	}{
		{"foo", 12182},                    // CLUSTER KEYSLOT foo
		{"bar", 5061},                     // CLUSTER KEYSLOT bar
		{"hello", 866},                    // CLUSTER KEYSLOT hello
		{"", 0},                           // empty key
		{"{foo}bar", 12182},               // tag: only "foo" is hashed
		{"a{foo}b{bar}", 12182},           // the first tag counts
		{"{}foo", Slot([]byte("{}foo"))},  // empty tag: whole key
		{"foo{", Slot([]byte("foo{"))},    // no closing brace: whole key
		{"{{foo}}", Slot([]byte("{foo"))}, // tag ends at the first '}'
	} {
		if got := Slot([]byte(c.key)); got != c.want {
			t.Errorf("Slot(%q) = %d, want %d", c.key, got, c.want)
		}
	}
	if a, b := Slot([]byte("{user1000}.following")), Slot([]byte("{user1000}.followers")); a != b {
		t.Errorf("hash tags: %d != %d", a, b)
	}
	if Slot([]byte("{}foo")) == Slot([]byte("foo")) {
		t.Errorf("an empty tag must hash the whole key")
	}
}

func TestParseRedirect(t *testing.T) {
	for _, c := range []struct {
		text string
		want Redirect
		ok   bool
	}{
		{"MOVED 3999 127.0.0.1:6381", Redirect{Slot: 3999, Addr: "127.0.0.1:6381"}, true},
		{"ASK 3999 127.0.0.1:6381", Redirect{Ask: true, Slot: 3999, Addr: "127.0.0.1:6381"}, true},
		{"MOVED 16383 [::1]:7000", Redirect{Slot: 16383, Addr: "[::1]:7000"}, true},
		{"MOVED 16384 127.0.0.1:6381", Redirect{}, false}, // no such slot
		{"MOVED x 127.0.0.1:6381", Redirect{}, false},
		{"MOVED 12", Redirect{}, false},
		{"ERR wrong number of arguments", Redirect{}, false},
		{"ASKING", Redirect{}, false},
		{"MOVED 1 :99999", Redirect{}, false}, // no such port: see TestBadRedirect
	} {
		got, ok := ParseRedirect([]byte(c.text))
		if ok != c.ok || got != c.want {
			t.Errorf("ParseRedirect(%q) = %+v, %v; want %+v, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

// TestBadRedirect: a MOVED or ASK that cannot be followed is a protocol
// error naming the reply, not a node to join; good redirects, ":port" and
// other errors are not.
func TestBadRedirect(t *testing.T) {
	for _, text := range []string{
		"MOVED 1 :99999", "MOVED 1 :0", "MOVED 1 127.0.0.1:65536", "ASK 1 127.0.0.1:x", "MOVED 1 127.0.0.1:",
		"MOVED 1 127.0.0.1", "MOVED 1 :-1", "MOVED 16384 127.0.0.1:7000", "MOVED x 127.0.0.1:7000", "MOVED 12",
		"MOVED 1 :+80", "MOVED 1 :123456",
	} {
		err := BadRedirect([]byte(text))
		if err == nil || !errors.Is(err, conn.ErrProtocol) || !strings.Contains(err.Error(), "-"+text) {
			t.Errorf("BadRedirect(%q) = %v, want a protocol error naming the reply", text, err)
		}
		if _, ok := ParseRedirect([]byte(text)); ok {
			t.Errorf("ParseRedirect(%q) took it", text)
		}
	}
	for _, text := range []string{"MOVED 1 :6381", "MOVED 1 ?:6381", "ASK 16383 [::1]:65535", "MOVED 0 127.0.0.1:1",
		"ERR unknown command", "MOVEDX 1 :99999", "CLUSTERDOWN"} {
		if err := BadRedirect([]byte(text)); err != nil {
			t.Errorf("BadRedirect(%q) = %v, want nil", text, err)
		}
	}
}

func TestRedirectTarget(t *testing.T) {
	for _, c := range []struct{ addr, from, want string }{
		{"127.0.0.3:7001", "127.0.0.2:7000", "127.0.0.3:7001"},  // a host of its own
		{":7001", "127.0.0.2:7000", "127.0.0.2:7001"},           // Redis 7's unknown endpoint: the sender's host
		{"?:7001", "127.0.0.2:7000", "127.0.0.2:7001"},          // the "?" of CLUSTER SLOTS
		{":7001", "[::1]:7000", "[::1]:7001"},                   // IPv6
		{":7001", "node-a.example:7000", "node-a.example:7001"}, // a hostname
		{"[::1]:7001", "127.0.0.2:7000", "[::1]:7001"},
		{"nonsense", "127.0.0.2:7000", "nonsense"}, // left as sent: its dial fails and says so
	} {
		if got := (Redirect{Addr: c.addr}).Target(c.from); got != c.want {
			t.Errorf("Target(%q from %q) = %q, want %q", c.addr, c.from, got, c.want)
		}
	}
	r, ok := ParseRedirect([]byte("MOVED 3999 :6381"))
	if !ok || r.Addr != ":6381" || r.Target("127.0.0.2:6379") != "127.0.0.2:6381" {
		t.Errorf("MOVED 3999 :6381: %+v %v", r, ok)
	}
}

func TestRetryable(t *testing.T) {
	for text, want := range map[string]bool{
		"CLUSTERDOWN The cluster is down":                         true,
		"TRYAGAIN Multiple keys request during rehashing of slot": true,
		"MOVED 1 127.0.0.1:1":                                     false,
		"ERR unknown command":                                     false,
	} {
		if Retryable([]byte(text)) != want {
			t.Errorf("Retryable(%q) != %v", text, want)
		}
	}
}

func args(s string) [][]byte {
	var a [][]byte
	for _, f := range strings.Fields(s) {
		a = append(a, []byte(f))
	}
	return a
}

func TestCommandSlot(t *testing.T) {
	for _, c := range []struct {
		cmd    string
		slot   uint16
		hasKey bool
		err    string
	}{
		{"GET foo", 12182, true, ""},
		{"get foo", 12182, true, ""},
		{"SET foo bar", 12182, true, ""},
		{"PING", 0, false, ""},
		{"MSET {t}a 1 {t}b 2", Slot([]byte("t")), true, ""},
		{"MSET foo 1 bar 2", 0, false, "MSET keys span slots 12182 and 5061; use a {hash tag}"},
		{"DEL {x}1 {x}2 {x}3", Slot([]byte("x")), true, ""},
		{"BLPOP foo {foo}x 0", 12182, true, ""}, // the timeout is no key
		{"RENAME foo {foo}bar", 12182, true, ""},
		{"NOSUCHCMD a", 0, false, "NOSUCHCMD: key positions unknown"},
	} {
		slot, hasKey, err := CommandSlot(args(c.cmd))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.cmd, err, c.err)
			}
			continue
		}
		if err != nil || slot != c.slot || hasKey != c.hasKey {
			t.Errorf("%s: %d, %v, %v; want %d, %v", c.cmd, slot, hasKey, err, c.slot, c.hasKey)
		}
	}
	if _, _, err := CommandSlot(args("FOO x")); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("unknown command: %v", err)
	}
}

func TestCommandSlotAllocatesNothing(t *testing.T) {
	a := args("set foo bar")
	if n := testing.AllocsPerRun(100, func() { _, _, _ = CommandSlot(a) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

func TestKeyPositionsCoverTheCatalogue(t *testing.T) {
	for _, n := range []string{"SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "HSET", "SPOP",
		"ZADD", "ZPOPMIN", "LRANGE", "MSET", "XADD", "PING"} {
		if _, ok := KeyPositions(n); !ok {
			t.Errorf("%s missing", n)
		}
	}
	if s, _ := KeyPositions("mset"); s != (KeySpec{1, -1, 2}) {
		t.Errorf("MSET: %+v", s)
	}
}

// value parses a crafted RESP reply.
func value(t *testing.T, resp string) conn.Value {
	t.Helper()
	v, err := conn.NewReader(strings.NewReader(resp), func() int64 { return 0 }).ReadValue()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// resp builds RESP2 from a nested description: string, int, []any, nil.
func resp(v any) string {
	var b bytes.Buffer
	var w func(v any)
	w = func(v any) {
		switch x := v.(type) {
		case nil:
			b.WriteString("$-1\r\n")
		case int:
			b.WriteString(":" + strconv.Itoa(x) + "\r\n")
		case string:
			b.WriteString("$" + strconv.Itoa(len(x)) + "\r\n" + x + "\r\n")
		case []any:
			b.WriteString("*" + strconv.Itoa(len(x)) + "\r\n")
			for _, e := range x {
				w(e)
			}
		}
	}
	w(v)
	return b.String()
}

// TestParseSlots: Redis 6's CLUSTER SLOTS, with a replica, a primary that
// serves two ranges, and an unknown host ("") that stands for the seed's.
func TestParseSlots(t *testing.T) {
	v := value(t, resp([]any{
		[]any{0, 5460, []any{"10.0.0.1", 7000, "id-a"}, []any{"10.0.0.4", 7003, "id-d"}},
		[]any{5461, 10922, []any{"", 7001, "id-b"}},
		[]any{10923, 16000, []any{"10.0.0.3", 7002, "id-c"}},
		[]any{16001, 16383, []any{"10.0.0.1", 7000, "id-a"}},
	}))
	top, err := parseSlots(v, "seed.example")
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{ID: "id-a", Addr: "10.0.0.1:7000", Replicas: []string{"10.0.0.4:7003"}},
		{ID: "id-b", Addr: "seed.example:7001"},
		{ID: "id-c", Addr: "10.0.0.3:7002"},
	}
	if len(top.Primaries) != len(want) {
		t.Fatalf("primaries %+v", top.Primaries)
	}
	for i := range want {
		g := top.Primaries[i]
		if g.ID != want[i].ID || g.Addr != want[i].Addr || strings.Join(g.Replicas, ",") != strings.Join(want[i].Replicas, ",") {
			t.Errorf("primary %d = %+v, want %+v", i, g, want[i])
		}
	}
	if !top.Covered() {
		t.Error("not covered")
	}
	for slot, owner := range map[uint16]int{0: 0, 5460: 0, 5461: 1, 12182: 2, 16001: 0, 16383: 0} {
		if top.Owner(slot) != owner {
			t.Errorf("Owner(%d) = %d, want %d", slot, top.Owner(slot), owner)
		}
	}
	if n := top.SlotsOf(0) + top.SlotsOf(1) + top.SlotsOf(2); n != Slots {
		t.Errorf("slots add up to %d", n)
	}
	if top.Index("10.0.0.3:7002") != 2 || top.Index("10.0.0.4:7003") != -1 {
		t.Error("Index")
	}
}

func TestParseSlotsUncovered(t *testing.T) {
	top, err := parseSlots(value(t, resp([]any{[]any{0, 100, []any{"h", 1, "x"}}})), "s")
	if err != nil {
		t.Fatal(err)
	}
	if top.Covered() || top.Owner(101) != -1 || top.SlotsOf(0) != 101 {
		t.Errorf("covered %v, owner %d, slots %d", top.Covered(), top.Owner(101), top.SlotsOf(0))
	}
	for _, bad := range []any{
		[]any{[]any{0, 100}},                   // no node
		[]any{[]any{0, 16384, []any{"h", 1}}},  // beyond the last slot
		[]any{[]any{5, 4, []any{"h", 1}}},      // reversed
		[]any{[]any{0, 1, []any{"h", "port"}}}, // port not an integer
		[]any{[]any{0, 1, []any{"h", 99999}}},  // not a port
		[]any{[]any{0, 1, []any{"h", 0}}},
		[]any{[]any{0, 1, []any{"h", -1}}},
		[]any{[]any{0, 1, []any{"h", 1}, []any{"r", 70000}}}, // a replica's
	} {
		if _, err := parseSlots(value(t, resp(bad)), "s"); err == nil {
			t.Errorf("%q accepted", resp(bad))
		}
	}
}

// TestParseShards: Redis 7's CLUSTER SHARDS with a replica, a failed
// former primary, and a shard without slots.
func TestParseShards(t *testing.T) {
	node := func(id, ip string, port int, role, health string) []any {
		return []any{"id", id, "port", port, "ip", ip, "endpoint", ip, "hostname", "", "role", role,
			"replication-offset", 1, "health", health}
	}
	v := value(t, resp([]any{
		[]any{"slots", []any{0, 8191}, "nodes", []any{
			node("a", "127.0.0.1", 7000, "master", "online"),
			node("d", "127.0.0.1", 7003, "replica", "online"),
		}},
		[]any{"slots", []any{8192, 9000, 9001, 16383}, "nodes", []any{
			node("b", "127.0.0.1", 7001, "master", "online"),
			node("old", "127.0.0.1", 7009, "master", "fail"),
		}},
		[]any{"slots", []any{}, "nodes", []any{node("c", "?", 7002, "master", "online")}},
	}))
	top, err := parseShards(v, "127.0.0.1", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Primaries) != 3 || top.Primaries[0].Addr != "127.0.0.1:7000" || len(top.Primaries[0].Replicas) != 1 ||
		top.Primaries[0].Replicas[0] != "127.0.0.1:7003" || top.Primaries[1].ID != "b" || top.Primaries[2].Addr != "127.0.0.1:7002" {
		t.Fatalf("%+v", top.Primaries)
	}
	if !top.Covered() || top.SlotsOf(0) != 8192 || top.SlotsOf(1) != 8192 || top.SlotsOf(2) != 0 || top.Owner(9000) != 1 {
		t.Errorf("covered %v, slots %d %d %d", top.Covered(), top.SlotsOf(0), top.SlotsOf(1), top.SlotsOf(2))
	}
	// RESP3 sends the same as maps.
	v3 := value(t, "*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n"+
		"%4\r\n$2\r\nid\r\n$1\r\nz\r\n$4\r\nport\r\n:7000\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n")
	top, err = parseShards(v3, "127.0.0.1", false)
	if err != nil || len(top.Primaries) != 1 || top.Primaries[0].Addr != "127.0.0.1:7000" || !top.Covered() {
		t.Fatalf("RESP3: %v %+v", err, top)
	}
	// A failed node without a port is left out, as it is not dialled.
	v = value(t, resp([]any{[]any{"slots", []any{0, 16383}, "nodes", []any{
		node("a", "127.0.0.1", 7000, "master", "online"), node("gone", "127.0.0.1", 0, "replica", "fail")}}}))
	if top, err := parseShards(v, "127.0.0.1", false); err != nil || len(top.Primaries) != 1 || len(top.Primaries[0].Replicas) != 0 {
		t.Errorf("a failed replica without a port: %v %+v", err, top)
	}
	// A port that is not one is refused, naming it, not dialled later.
	for _, port := range []int{0, 99999, -5} {
		v := value(t, resp([]any{[]any{"slots", []any{0, 16383}, "nodes", []any{node("a", "127.0.0.1", port, "master", "online")}}}))
		if _, err := parseShards(v, "127.0.0.1", false); err == nil || !strings.Contains(err.Error(), strconv.Itoa(port)) {
			t.Errorf("port %d: %v, want an error naming it", port, err)
		}
	}
}

func TestTagCoversEverySlot(t *testing.T) {
	for s := range uint16(Slots) {
		tag := Tag(s)
		if len(tag) == 0 || len(tag) > 3 || Slot(tag) != s {
			t.Fatalf("Tag(%d) = %q (slot %d)", s, tag, Slot(tag))
		}
		key := []byte("key:{tag}:000000000042")
		PutTag(key[4:9], s)
		if Slot(key) != s || len(key) != 22 {
			t.Fatalf("PutTag(%d): %q hashes to %d", s, key, Slot(key))
		}
	}
}

// TestTagSlot: a key's "{tag}" slot comes from the rest of its name, so
// it is the same whatever tag the key holds, and the key, once tagged,
// hashes to it; keys that differ elsewhere spread over the slots.
func TestTagSlot(t *testing.T) {
	key := []byte("key:{tag}:000000000042")
	s := TagSlot(key)
	if s != crc16([]byte("key::000000000042"))&(Slots-1) {
		t.Errorf("TagSlot = %d", s)
	}
	PutTag(key[4:9], s)
	if TagSlot(key) != s || Slot(key) != s {
		t.Errorf("tagged %q: TagSlot %d, Slot %d, want %d", key, TagSlot(key), Slot(key), s)
	}
	PutTag(key[4:9], s+1) // another tag: the same TagSlot
	if TagSlot(key) != s {
		t.Errorf("TagSlot depends on the tag: %d", TagSlot(key))
	}
	for _, k := range []string{"plain", "ends{tag", "{}"} { // no five-byte tag
		if TagSlot([]byte(k)) != Slot([]byte(k)) {
			t.Errorf("TagSlot(%q) != Slot", k)
		}
	}
	seen := map[uint16]bool{}
	for i := range 1000 {
		seen[TagSlot([]byte("key:{tag}:"+strconv.Itoa(100000000000+i)))] = true
	}
	if len(seen) < 900 {
		t.Errorf("1000 keys on %d slots", len(seen))
	}
}

func TestPutKeyTags(t *testing.T) {
	mset := conn.AppendCommand(nil, "MSET", "a:{tag}:1", "v", "b:{tag}:2", "{tag}", "plain", "w")
	spec := KeySpec{First: 1, Last: -1, Step: 2}
	s, ok := EncodedTagSlot(mset, spec)
	if !ok || s != TagSlot([]byte("a:{tag}:1")) {
		t.Fatalf("EncodedTagSlot %d %v", s, ok)
	}
	PutKeyTags(mset, spec, s)
	for _, pos := range []int{1, 3} {
		k, _ := conn.Arg(mset, pos)
		if Slot(k) != s {
			t.Errorf("key %q on slot %d, want %d", k, Slot(k), s)
		}
	}
	if v, _ := conn.Arg(mset, 4); string(v) != "{tag}" {
		t.Errorf("a value was tagged: %q", v)
	}
	if k, _ := conn.Arg(mset, 5); string(k) != "plain" {
		t.Errorf("a key without a tag changed: %q", k)
	}
	if _, ok := EncodedSlot(conn.AppendCommand(nil, "PING"), KeySpec{}); ok {
		t.Error("PING has a key")
	}
	if n := testing.AllocsPerRun(100, func() {
		s, _ := EncodedTagSlot(mset, spec)
		PutKeyTags(mset, spec, s)
	}); n != 0 {
		t.Errorf("%v allocations per command", n)
	}
}

// TestDiff: a migration of slots between primaries, and a failover where
// a replica takes its primary's slots.
func TestDiff(t *testing.T) {
	a := NewTopology([]Node{{Addr: "a:1", Replicas: []string{"r:1"}}, {Addr: "b:1"}})
	a.Assign(0, 8191, 0)
	a.Assign(8192, Slots-1, 1)
	b := NewTopology([]Node{{Addr: "r:1"}, {Addr: "b:1"}})
	b.Assign(0, 99, 1)     // migrated to b
	b.Assign(100, 8191, 0) // the replica took over
	b.Assign(8192, Slots-1, 1)
	got := Diff(a, b)
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if c := got[0]; c.From != "a:1" || c.To != "b:1" || c.Promoted || len(c.Slots) != 1 || c.Slots[0] != [2]uint16{0, 99} {
		t.Fatalf("migration %+v", c)
	}
	if c := got[1]; c.From != "a:1" || c.To != "r:1" || !c.Promoted || c.Slots[0] != [2]uint16{100, 8191} {
		t.Fatalf("failover %+v", c)
	}
	if Diff(a, a) != nil || Diff(nil, a) != nil {
		t.Fatal("no change")
	}
}
