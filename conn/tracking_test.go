package conn

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type trackedRead struct {
	t    Tracked
	keys []string
}

func readAllTracked(in string, oneByte bool) ([]trackedRead, error) {
	var src = strings.NewReader(in)
	p := NewReader(src, nil)
	if oneByte {
		p = NewReader(iotest.OneByteReader(src), nil)
	}
	var out []trackedRead
	for {
		var r trackedRead
		err := p.readTracked(&r.t, func(k []byte) { r.keys = append(r.keys, string(k)) })
		if err != nil {
			return out, err
		}
		r.t.Head, r.t.Text = bytes.Clone(r.t.Head), bytes.Clone(r.t.Text)
		out = append(out, r)
	}
}

// TestReadTracked: a tracking connection's replies to its reads (values,
// nulls of both protocols), invalidations of one key, of a batch (BCAST)
// and of none (a flush), other pushes and replies between them.
func TestReadTracked(t *testing.T) {
	long := strings.Repeat("v", 300)
	in := "+OK\r\n" +
		"$5\r\nhello\r\n" +
		"_\r\n" +
		"$-1\r\n" +
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$5\r\nk:123\r\n" +
		"$300\r\n" + long + "\r\n" +
		">2\r\n$10\r\ninvalidate\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n" +
		">2\r\n$10\r\ninvalidate\r\n_\r\n" +
		">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n" +
		"-ERR nope\r\n" +
		":7\r\n"
	for _, oneByte := range []bool{false, true} {
		got, _ := readAllTracked(in, oneByte)
		want := []struct {
			kind  TrackedKind
			head  string
			n     int64
			null  bool
			keys  []string
			flush bool
		}{
			{kind: TrackedReply},
			{kind: TrackedValue, head: "hello", n: 5},
			{kind: TrackedValue, null: true},
			{kind: TrackedValue, null: true},
			{kind: TrackedInvalidate, keys: []string{"k:123"}},
			{kind: TrackedValue, head: long[:MaxPushHead], n: 300},
			{kind: TrackedInvalidate, keys: []string{"a", "b", "c"}},
			{kind: TrackedInvalidate, flush: true},
			{kind: TrackedReply},
			{kind: TrackedError},
			{kind: TrackedReply},
		}
		if len(got) != len(want) {
			t.Fatalf("one byte %v: read %d, want %d: %+v", oneByte, len(got), len(want), got)
		}
		for i, w := range want {
			g := got[i]
			if g.t.Kind != w.kind || string(g.t.Head) != w.head || g.t.Len != w.n || g.t.Null != w.null ||
				strings.Join(g.keys, ",") != strings.Join(w.keys, ",") || g.t.Flush != w.flush || g.t.Keys != len(w.keys) {
				t.Errorf("one byte %v, read %d: %+v keys %q; want %+v", oneByte, i, g.t, g.keys, w)
			}
		}
		if e := got[9].t; string(e.Text) != "ERR nope" {
			t.Errorf("error text %q", e.Text)
		}
	}
}

// TestReadTrackedMalformed: cut or malformed input is an error, never a
// panic.
func TestReadTrackedMalformed(t *testing.T) {
	for _, c := range []struct {
		in  string
		cut bool // ends early: an end of input, not a protocol error
	}{
		{">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\na\r\n", true},
		{"$5\r\nhel", true},
		{">2\r\n$10\r\ninvalidate\r\n:5\r\n", false},
		{">2\r\n$10\r\ninvalidate\r\n*?\r\n", false},
		{">?\r\n", false},
		{"$5\r\nhelloXX", false},
		{"\r\n", false},
	} {
		got, err := readAllTracked(c.in, false)
		switch {
		case len(got) > 0:
			t.Errorf("%q: read %+v", c.in, got)
		case c.cut && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("%q: %v, want the end of input", c.in, err)
		case !c.cut && (err == nil || errors.Is(err, io.EOF)):
			t.Errorf("%q: %v, want a protocol error", c.in, err)
		}
	}
}
