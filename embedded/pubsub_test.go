package embedded

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// push is a delivery's encoding, RESP2.
func push(kind, channel, msg string) string {
	return "*3\r\n$" + itoa(len(kind)) + "\r\n" + kind + "\r\n$" + itoa(len(channel)) + "\r\n" + channel + "\r\n$" + itoa(len(msg)) + "\r\n" + msg + "\r\n"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestPubSub: SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE each get what is
// published to them, PUBLISH counts its receivers, and UNSUBSCRIBE stops
// the deliveries.
func TestPubSub(t *testing.T) {
	srv := start(t, Faults{})
	a, b, s, pub := dial(t, srv), dial(t, srv), dial(t, srv), dial(t, srv)
	if got := a.do("SUBSCRIBE", "news", "sport"); got != "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n" {
		t.Fatalf("subscribe: %q", got)
	}
	if got := a.reply(); got != "*3\r\n$9\r\nsubscribe\r\n$5\r\nsport\r\n:2\r\n" {
		t.Fatalf("second confirmation: %q", got)
	}
	if got := b.do("PSUBSCRIBE", "n?w*"); got != "*3\r\n$10\r\npsubscribe\r\n$4\r\nn?w*\r\n:1\r\n" {
		t.Fatalf("psubscribe: %q", got)
	}
	if got := s.do("SSUBSCRIBE", "shard"); got != "*3\r\n$10\r\nssubscribe\r\n$5\r\nshard\r\n:1\r\n" {
		t.Fatalf("ssubscribe: %q", got)
	}
	if got := pub.do("PUBLISH", "news", "hello"); got != ":2\r\n" {
		t.Fatalf("publish news: %q", got)
	}
	if got := a.reply(); got != push("message", "news", "hello") {
		t.Fatalf("a got %q", got)
	}
	if got := b.reply(); got != "*4\r\n$8\r\npmessage\r\n$4\r\nn?w*\r\n$4\r\nnews\r\n$5\r\nhello\r\n" {
		t.Fatalf("b got %q", got)
	}
	if got := pub.do("SPUBLISH", "shard", "x\r\ny"); got != ":1\r\n" {
		t.Fatalf("spublish: %q", got)
	}
	if got := s.reply(); got != push("smessage", "shard", "x\r\ny") {
		t.Fatalf("s got %q", got)
	}
	if got := pub.do("PUBLISH", "shard", "nobody"); got != ":0\r\n" {
		t.Fatalf("a sharded channel's subscribers do not get PUBLISH: %q", got)
	}
	// Subscribed in RESP2: only the subscription commands and PING.
	if got := a.do("GET", "k"); !strings.HasPrefix(got, "-ERR Can't execute 'get'") {
		t.Fatalf("GET while subscribed: %q", got)
	}
	if got := a.do("PING"); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
		t.Fatalf("PING while subscribed: %q", got)
	}
	if got := pub.do("PUBSUB", "NUMSUB", "news", "none"); got != "*4\r\n$4\r\nnews\r\n:1\r\n$4\r\nnone\r\n:0\r\n" {
		t.Fatalf("numsub: %q", got)
	}
	a.do("UNSUBSCRIBE")
	a.reply()
	if got := pub.do("PUBLISH", "sport", "later"); got != ":0\r\n" {
		t.Fatalf("after UNSUBSCRIBE: %q", got)
	}
	if got := a.do("GET", "k"); got != "$-1\r\n" {
		t.Fatalf("unsubscribed, GET: %q", got)
	}
}

// TestPubSubRESP3: a RESP3 subscriber gets pushes (>) and may run any
// command between them.
func TestPubSubRESP3(t *testing.T) {
	srv := start(t, Faults{})
	a, pub := dial(t, srv), dial(t, srv)
	a.do("HELLO", "3")
	if got := a.do("SUBSCRIBE", "c"); got != ">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n" {
		t.Fatalf("%q", got)
	}
	pub.do("PUBLISH", "c", "m")
	if got := a.reply(); got != ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n" {
		t.Fatalf("%q", got)
	}
	if got := a.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET while subscribed in RESP3: %q", got)
	}
}

// TestStallHoldsDeliveries: a message published during a stall reaches
// its subscriber when the stall ends, as the PUBLISH's reply does.
func TestStallHoldsDeliveries(t *testing.T) {
	srv := start(t, Faults{Stall: 150 * time.Millisecond, Every: 300 * time.Millisecond})
	sub, pub := dial(t, srv), dial(t, srv)
	sub.do("SUBSCRIBE", "c")
	first := srv.stallsBetween(srv.start, srv.start+int64(time.Second))[0]
	clock.SleepUntil(first[0] + int64(20*time.Millisecond))
	if _, err := pub.c.Write([]byte(encode("PUBLISH", "c", "m"))); err != nil {
		t.Fatal(err)
	}
	if got := sub.reply(); got != push("message", "c", "m") {
		t.Fatalf("%q", got)
	}
	if got := clock.Now(); got < first[1] {
		t.Fatalf("delivered %v before the stall's end", time.Duration(first[1]-got))
	}
	if got := pub.reply(); got != ":1\r\n" {
		t.Fatalf("%q", got)
	}
}

// TestSlowSubscriberIsDisconnected: a subscriber that does not read is
// dropped once its pending deliveries pass MaxPubsubBuffer; the publisher
// never waits for it, and the server forgets its subscription.
func TestSlowSubscriberIsDisconnected(t *testing.T) {
	srv, err := Start(Config{MaxPubsubBuffer: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sub, pub := dial(t, srv), dial(t, srv)
	sub.do("SUBSCRIBE", "c")
	msg := strings.Repeat("x", 10<<10)
	last := ""
	for range 2000 { // 20 MB: more than the kernel's socket buffers hold
		last = pub.do("PUBLISH", "c", msg)
		if last == ":0\r\n" {
			break
		}
	}
	if last != ":0\r\n" {
		t.Fatalf("the subscriber was never dropped: PUBLISH still answers %q", last)
	}
	sub.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf [64 << 10]byte
	for {
		if _, err := sub.c.Read(buf[:]); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the dropped subscriber's connection stays open")
			}
			break
		}
	}
	if got := pub.do("PUBSUB", "NUMSUB", "c"); got != "*2\r\n$1\r\nc\r\n:0\r\n" {
		t.Fatalf("numsub after the drop: %q", got)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"*", "", true}, {"*", "a/b", true}, {"a*c", "abbbc", true}, {"a*c", "abbb", false},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false}, {"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false}, {"h[a-b]llo", "hbllo", true}, {"h[a-b]llo", "hcllo", false},
		{`h\*llo`, "h*llo", true}, {`h\*llo`, "hallo", false}, {"news.*", "news.sport", true}, {"**a", "xxa", true},
	} {
		if got := globMatch([]byte(c.p), []byte(c.s)); got != c.ok {
			t.Errorf("%q ~ %q: %v, want %v", c.p, c.s, got, c.ok)
		}
	}
}
