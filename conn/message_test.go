package conn

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// pushes reads every push of in.
func pushes(t *testing.T, in string) []Push {
	t.Helper()
	p := NewReader(strings.NewReader(in), nil)
	var out []Push
	for {
		var m Push
		if err := p.readPush(&m); err != nil {
			return out
		}
		// Copy what the views point at: the next read reuses them.
		m.Channel, m.Pattern, m.Head, m.Text = bytes.Clone(m.Channel), bytes.Clone(m.Pattern), bytes.Clone(m.Head), bytes.Clone(m.Text)
		out = append(out, m)
	}
}

// TestReadPush: deliveries of the three kinds in RESP2 and RESP3, the
// subscription pushes with their counts, replies and errors between them,
// and a payload longer than the head kept.
func TestReadPush(t *testing.T) {
	long := strings.Repeat("p", 1000)
	in := "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" +
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n" +
		">4\r\n$8\r\npmessage\r\n$3\r\nc*x\r\n$3\r\ncax\r\n$4\r\n" + long[:4] + "\r\n" +
		"*3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1000\r\n" + long + "\r\n" +
		"*2\r\n$4\r\npong\r\n$0\r\n\r\n" +
		"-ERR nope\r\n" +
		"+PONG\r\n" +
		">3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n" +
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$-1\r\n"
	got := pushes(t, in)
	want := []Push{
		{Kind: PushSubscribed, Channel: []byte("ch"), Count: 1},
		{Kind: PushMessage, Channel: []byte("ch"), Head: []byte("hello"), PayloadLen: 5},
		{Kind: PushMessage, Pattern: []byte("c*x"), Channel: []byte("cax"), Head: []byte("pppp"), PayloadLen: 4},
		{Kind: PushMessage, Channel: []byte("s"), Head: []byte(long[:MaxPushHead]), PayloadLen: 1000},
		{Kind: PushReply},
		{Kind: PushError, Text: []byte("ERR nope")},
		{Kind: PushReply},
		{Kind: PushUnsubscribed, Channel: []byte("ch"), Count: 0},
		{Kind: PushMessage, Channel: []byte("ch"), Head: []byte{}, PayloadLen: -1},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d pushes, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || !bytes.Equal(g.Channel, w.Channel) || !bytes.Equal(g.Pattern, w.Pattern) ||
			!bytes.Equal(g.Head, w.Head) || g.PayloadLen != w.PayloadLen || g.Count != w.Count || !bytes.Equal(g.Text, w.Text) {
			t.Errorf("push %d: kind %d channel %q pattern %q head %q len %d count %d text %q; want %+v",
				i, g.Kind, g.Channel, g.Pattern, g.Head, g.PayloadLen, g.Count, g.Text, w)
		}
	}
}

// TestReadPushMalformed: a cut or malformed push is an error, never a
// panic; a push of an unknown kind is skipped whole.
func TestReadPushMalformed(t *testing.T) {
	for _, in := range []string{
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhel",
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhelloXX",
		"*3\r\n$7\r\nmessage\r\n",
		"*?\r\n",
		"\r\n",
		"*3\r\n$7\r\nmessage\r\n:1\r\n\r\n",
	} {
		p := NewReader(strings.NewReader(in), nil)
		var m Push
		if err := p.readPush(&m); err == nil {
			if err := p.readPush(&m); err == nil {
				t.Errorf("%q: no error", in)
			}
		}
	}
	// An unknown push of 5 elements with nested ones, then a delivery.
	got := pushes(t, ">5\r\n$7\r\ninvalid\r\n*2\r\n:1\r\n:2\r\n$1\r\na\r\n_\r\n%1\r\n+a\r\n+b\r\n*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nx\r\n")
	if len(got) != 2 || got[0].Kind != PushReply || got[1].Kind != PushMessage || string(got[1].Head) != "x" {
		t.Errorf("unknown push then a message: %+v", got)
	}
}

// TestReadPushDoesNotAllocate: a delivery costs no allocation.
func TestReadPushDoesNotAllocate(t *testing.T) {
	one := "*3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$40\r\n" + strings.Repeat("x", 40) + "\r\n"
	src := strings.NewReader(strings.Repeat(one, 2000))
	p := NewReader(src, nil)
	var m Push
	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.readPush(&m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per delivery", allocs)
	}
}

// entries reads one stream reply of in.
func entries(t *testing.T, in string) ([]string, int, error) {
	t.Helper()
	p := NewReader(strings.NewReader(in), nil)
	var out []string
	var e StreamEntry
	n, err := p.readEntries(&e, func(e *StreamEntry) {
		out = append(out, string(e.Stream)+" "+string(e.ID)+" "+string(e.Head))
	})
	return out, n, err
}

// TestReadEntries: XREADGROUP's reply in RESP2 and RESP3, a null (BLOCK
// timed out), a deleted entry still pending, and an error reply.
func TestReadEntries(t *testing.T) {
	resp2 := "*2\r\n" +
		"*2\r\n$2\r\ns1\r\n*2\r\n" +
		"*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\np\r\n$3\r\nabc\r\n" +
		"*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\np\r\n$2\r\nde\r\n$1\r\nq\r\n$1\r\nz\r\n" +
		"*2\r\n$2\r\ns2\r\n*1\r\n" +
		"*2\r\n$3\r\n2-0\r\n*-1\r\n"
	got, n, err := entries(t, resp2)
	want := []string{"s1 1-0 abc", "s1 1-1 de", "s2 2-0 "}
	if err != nil || n != 3 || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("RESP2: %q %d %v, want %q", got, n, err, want)
	}
	resp3 := "%1\r\n$2\r\ns1\r\n*1\r\n*2\r\n$3\r\n5-7\r\n*2\r\n$1\r\np\r\n$4\r\nwxyz\r\n"
	if got, n, err := entries(t, resp3); err != nil || n != 1 || got[0] != "s1 5-7 wxyz" {
		t.Errorf("RESP3: %q %d %v", got, n, err)
	}
	for _, null := range []string{"*-1\r\n", "_\r\n"} {
		if got, n, err := entries(t, null); err != nil || n != 0 || len(got) != 0 {
			t.Errorf("%q: %q %d %v", null, got, n, err)
		}
	}
	_, _, err = entries(t, "-NOGROUP No such key\r\n")
	if se, ok := err.(*ServerError); !ok || se.Msg != "NOGROUP No such key" {
		t.Errorf("error reply: %v", err)
	}
	if _, _, err := entries(t, "+OK\r\n"); err == nil {
		t.Error("a simple string is not a stream read's reply")
	}
}

func FuzzReadPush(f *testing.F) {
	for _, s := range []string{"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n", ">4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$1\r\nc\r\n$1\r\nx\r\n",
		"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "-ERR x\r\n", "!3\r\nERR\r\n", "+PONG\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewReader(bytes.NewReader(b), nil)
		var m Push
		for range 1000 {
			if err := p.readPush(&m); err != nil {
				return
			}
		}
	})
}

func FuzzReadEntries(f *testing.F) {
	for _, s := range []string{"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\np\r\n$1\r\nx\r\n", "_\r\n", "*-1\r\n", "-ERR x\r\n",
		"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n%1\r\n$1\r\np\r\n$1\r\nx\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewReader(bytes.NewReader(b), nil)
		var e StreamEntry
		for range 100 {
			if _, err := p.readEntries(&e, func(*StreamEntry) {}); err != nil {
				if _, ok := err.(*ServerError); !ok {
					return
				}
			}
		}
	})
}

// TestIntegerReply: an integer reply's value, signed, reaches the Reply.
func TestIntegerReply(t *testing.T) {
	p := NewReader(strings.NewReader(":42\r\n:-7\r\n:99999999999999999999\r\n+OK\r\n"), nil)
	for _, want := range []struct {
		v  int64
		ok bool
	}{{42, true}, {-7, true}, {0, false}, {0, false}} {
		r, err := p.Next()
		if err != nil || r.Int != want.v || r.IsInt != want.ok {
			t.Errorf("%+v %v, want %d %v", r, err, want.v, want.ok)
		}
	}
}

// TestReadEntriesInPieces: a reply of several streams read a byte at a
// time (the buffer moves under every line) yields every stream's
// entries.
func TestReadEntriesInPieces(t *testing.T) {
	var b strings.Builder
	b.WriteString("*2\r\n")
	for _, s := range []string{"s0", "s2"} {
		b.WriteString("*2\r\n$2\r\n" + s + "\r\n*3\r\n")
		for i := range 3 {
			v := s + "-" + strings.Repeat("v", i)
			b.WriteString("*2\r\n$3\r\n1-" + string(rune('0'+i)) + "\r\n*2\r\n$1\r\np\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n")
		}
	}
	p := NewReader(iotest.OneByteReader(strings.NewReader(b.String())), nil)
	var e StreamEntry
	var got []string
	n, err := p.readEntries(&e, func(e *StreamEntry) { got = append(got, string(e.Stream)+" "+string(e.Head)) })
	if err != nil || n != 6 || got[3] != "s2 s2-" || got[5] != "s2 s2-vv" {
		t.Fatalf("%d entries, %v: %q", n, err, got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
