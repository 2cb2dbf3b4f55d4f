package embedded

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// ids replaces every stream ID of a reply by ID, so replies compare.
var idPattern = regexp.MustCompile(`\$\d+\r\n\d+-\d+\r\n`)

func noIDs(s string) string { return idPattern.ReplaceAllString(s, "ID\r\n") }

// TestStreamEntries: XADD with its IDs and MAXLEN, XLEN, XRANGE, XDEL and
// XTRIM.
func TestStreamEntries(t *testing.T) {
	srv := start(t, Faults{})
	s := dial(t, srv)
	if got := s.do("XADD", "s", "5-1", "f", "v"); got != "$3\r\n5-1\r\n" {
		t.Fatalf("%q", got)
	}
	if got := s.do("XADD", "s", "5-1", "f", "v"); !strings.HasPrefix(got, "-ERR The ID specified in XADD is equal or smaller") {
		t.Fatalf("%q", got)
	}
	if got := s.do("XADD", "s", "5-*", "f", "w"); got != "$3\r\n5-2\r\n" {
		t.Fatalf("%q", got)
	}
	for range 5 {
		s.do("XADD", "s", "MAXLEN", "~", "4", "*", "f", "x")
	}
	if got := s.do("XLEN", "s"); got != ":4\r\n" {
		t.Fatalf("MAXLEN 4: %q", got)
	}
	if got := s.do("XRANGE", "s", "-", "+", "COUNT", "1"); !strings.Contains(got, "$1\r\nf\r\n$1\r\nx\r\n") {
		t.Fatalf("%q", got)
	}
	if got := s.do("XRANGE", "s", "-", "5-2"); got != "*0\r\n" {
		t.Fatalf("trimmed entries are gone: %q", got)
	}
	if got := s.do("XTRIM", "s", "MAXLEN", "2"); got != ":2\r\n" {
		t.Fatalf("%q", got)
	}
	if got := s.do("XADD", "s", "NOMKSTREAM", "*", "f", "v"); !strings.HasPrefix(got, "$") {
		t.Fatalf("%q", got)
	}
	if got := s.do("XADD", "none", "NOMKSTREAM", "*", "f", "v"); got != "$-1\r\n" {
		t.Fatalf("%q", got)
	}
	if got := s.do("XADD", "s", "*", "f"); !strings.HasPrefix(got, "-ERR wrong number") {
		t.Fatalf("%q", got)
	}
}

// TestConsumerGroup: entries go to one consumer of a group each, stay
// pending until acknowledged, and XPENDING and XINFO say so.
func TestConsumerGroup(t *testing.T) {
	srv := start(t, Faults{})
	s, c1, c2 := dial(t, srv), dial(t, srv), dial(t, srv)
	if got := s.do("XGROUP", "CREATE", "s", "g", "$"); !strings.HasPrefix(got, "-ERR The XGROUP subcommand requires the key to exist") {
		t.Fatalf("%q", got)
	}
	if got := s.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"); got != "+OK\r\n" {
		t.Fatalf("%q", got)
	}
	if got := s.do("XGROUP", "CREATE", "s", "g", "$"); !strings.HasPrefix(got, "-BUSYGROUP") {
		t.Fatalf("%q", got)
	}
	for _, v := range []string{"a", "b", "c"} {
		s.do("XADD", "s", "*", "p", v)
	}
	got := noIDs(c1.do("XREADGROUP", "GROUP", "g", "one", "COUNT", "2", "STREAMS", "s", ">"))
	if want := "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\nID\r\n*2\r\n$1\r\np\r\n$1\r\na\r\n*2\r\nID\r\n*2\r\n$1\r\np\r\n$1\r\nb\r\n"; got != want {
		t.Fatalf("one got %q", got)
	}
	got = noIDs(c2.do("XREADGROUP", "GROUP", "g", "two", "STREAMS", "s", ">"))
	if !strings.Contains(got, "$1\r\nc\r\n") || strings.Contains(got, "$1\r\na\r\n") {
		t.Fatalf("two got %q", got)
	}
	if got := c2.do("XREADGROUP", "GROUP", "g", "two", "STREAMS", "s", ">"); got != "*-1\r\n" {
		t.Fatalf("nothing left: %q", got)
	}
	if got := noIDs(s.do("XPENDING", "s", "g")); got != "*4\r\n:3\r\nID\r\nID\r\n*2\r\n*2\r\n$3\r\none\r\n$1\r\n2\r\n*2\r\n$3\r\ntwo\r\n$1\r\n1\r\n" {
		t.Fatalf("pending: %q", got)
	}
	// Acknowledge one's first entry; its history then holds the second.
	r := s.do("XRANGE", "s", "-", "+", "COUNT", "1")
	first := idPattern.FindString(r)
	first = first[strings.Index(first, "\n")+1 : len(first)-2]
	if got := s.do("XACK", "s", "g", first, first); got != ":1\r\n" {
		t.Fatalf("xack: %q", got)
	}
	got = noIDs(c1.do("XREADGROUP", "GROUP", "g", "one", "STREAMS", "s", "0"))
	if want := "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\nID\r\n*2\r\n$1\r\np\r\n$1\r\nb\r\n"; got != want {
		t.Fatalf("history: %q", got)
	}
	if got := s.do("XINFO", "GROUPS", "s"); !strings.Contains(got, "$7\r\npending\r\n:2\r\n") || !strings.Contains(got, "$3\r\nlag\r\n:0\r\n") {
		t.Fatalf("xinfo groups: %q", got)
	}
	if got := s.do("XREADGROUP", "GROUP", "nope", "x", "STREAMS", "s", ">"); !strings.HasPrefix(got, "-NOGROUP") {
		t.Fatalf("%q", got)
	}
	s.do("HELLO", "3")
	s.do("XADD", "s", "*", "p", "d")
	if got := noIDs(s.do("XREADGROUP", "GROUP", "g", "three", "STREAMS", "s", ">")); !strings.HasPrefix(got, "%1\r\n$1\r\ns\r\n*1\r\n") {
		t.Fatalf("RESP3: %q", got)
	}
}

// TestBlockedReadWakesOnAdd: XREADGROUP BLOCK waits for an XADD, and
// times out with a null.
func TestBlockedReadWakesOnAdd(t *testing.T) {
	srv := start(t, Faults{})
	s, c := dial(t, srv), dial(t, srv)
	s.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	t0 := time.Now()
	if got := c.do("XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "s", ">"); got != "*-1\r\n" {
		t.Fatalf("timeout: %q", got)
	}
	if d := time.Since(t0); d < 50*time.Millisecond {
		t.Fatalf("answered after %v, before BLOCK 50", d)
	}
	if _, err := c.c.Write([]byte(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">") + encode("PING"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	s.do("XADD", "s", "*", "p", "woke")
	if got := c.reply(); !strings.Contains(got, "$4\r\nwoke\r\n") {
		t.Fatalf("%q", got)
	}
	if got := c.reply(); got != "+PONG\r\n" {
		t.Fatalf("the command after the blocked one: %q", got)
	}
	// XREAD $ waits for what comes after the read began.
	if _, err := c.c.Write([]byte(encode("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	s.do("XADD", "s", "*", "p", "next")
	if got := c.reply(); !strings.Contains(got, "$4\r\nnext\r\n") || strings.Contains(got, "woke") {
		t.Fatalf("%q", got)
	}
}

// TestStallHoldsAWokenRead: an entry added during a stall reaches the
// blocked consumer when the stall ends.
func TestStallHoldsAWokenRead(t *testing.T) {
	srv := start(t, Faults{Stall: 150 * time.Millisecond, Every: 300 * time.Millisecond})
	s, c := dial(t, srv), dial(t, srv)
	s.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	if _, err := c.c.Write([]byte(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"))); err != nil {
		t.Fatal(err)
	}
	first := srv.stallsBetween(srv.start, srv.start+int64(time.Second))[0]
	clock.SleepUntil(first[0] + int64(20*time.Millisecond))
	if _, err := s.c.Write([]byte(encode("XADD", "s", "*", "p", "v"))); err != nil {
		t.Fatal(err)
	}
	if got := c.reply(); !strings.Contains(got, "$1\r\nv\r\n") {
		t.Fatalf("%q", got)
	}
	if got := clock.Now(); got < first[1] {
		t.Fatalf("delivered %v before the stall's end", time.Duration(first[1]-got))
	}
}

func TestStreamMemoryIsCharged(t *testing.T) {
	srv := start(t, Faults{})
	s := dial(t, srv)
	for range 100 {
		s.do("XADD", "s", "MAXLEN", "10", "*", "p", strings.Repeat("x", 1000))
	}
	srv.mu.Lock()
	o := srv.dbs[0]["s"]
	used, want := srv.used, keyCost(1)+o.recount()
	srv.mu.Unlock()
	if o.bytes != o.recount() || used != want || want < 10*1000 || want > 11*1000+10*entryOverhead+keyOverhead {
		t.Fatalf("used %d, bytes %d, recount %d", used, o.bytes, o.recount())
	}
}

// TestBlockedClientThatLeavesTakesNothing: a client that closes its
// connection while its XREADGROUP is blocked is forgotten at once, as
// Redis forgets it: the entries added next go to the consumers still
// there, not to the one that left.
func TestBlockedClientThatLeavesTakesNothing(t *testing.T) {
	srv := start(t, Faults{})
	s, gone := dial(t, srv), dial(t, srv)
	s.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	if _, err := gone.c.Write([]byte(encode("XREADGROUP", "GROUP", "g", "gone", "BLOCK", "0", "STREAMS", "s", ">"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	gone.c.Close()
	time.Sleep(20 * time.Millisecond)
	s.do("XADD", "s", "*", "p", "v")
	if got := s.do("XPENDING", "s", "g"); !strings.HasPrefix(got, "*4\r\n:0\r\n") {
		t.Fatalf("the entry went to the client that left: %q", got)
	}
	// A blocked client's pipelined command waits for it, then runs.
	c := dial(t, srv)
	if _, err := c.c.Write([]byte(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "s", ">") + encode("PING"))); err != nil {
		t.Fatal(err)
	}
	if got := c.reply(); !strings.Contains(got, "$1\r\nv\r\n") {
		t.Fatalf("%q", got)
	}
	if got := c.reply(); got != "+PONG\r\n" {
		t.Fatalf("%q", got)
	}
	if _, err := c.c.Write([]byte(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if _, err := c.c.Write([]byte(encode("PING"))); err != nil {
		t.Fatal(err)
	}
	if got := c.reply(); got != "*-1\r\n" {
		t.Fatalf("%q", got)
	}
	if got := c.reply(); got != "+PONG\r\n" {
		t.Fatalf("the command sent while blocked: %q", got)
	}
}
