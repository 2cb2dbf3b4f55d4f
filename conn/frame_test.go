package conn

import (
	"strings"
	"testing"
)

// TestFrame: frame says a value is whole exactly when the parser can read
// it without reading more: every proper prefix of a value is a part, the
// value is whole, and so is the value followed by more bytes.
func TestFrame(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, v := range []string{
		"+OK\r\n", "-ERR no\r\n", ":12\r\n", "_\r\n", ",1.5\r\n", "#t\r\n", "(123\r\n",
		"$5\r\nhello\r\n", "$0\r\n\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "!3\r\nERR\r\n", "=8\r\ntxt:abcd\r\n",
		"$300\r\n" + long + "\r\n",
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhe\r\no\r\n", // a payload holding CRLF
		">4\r\n$8\r\npmessage\r\n$3\r\nc*x\r\n$3\r\ncax\r\n$4\r\npppp\r\n",
		"*2\r\n*2\r\n:1\r\n:2\r\n*1\r\n$1\r\na\r\n",
		"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n:2\r\n", "~2\r\n:1\r\n:2\r\n",
		"|1\r\n+key\r\n+val\r\n*1\r\n:1\r\n", "|0\r\n:7\r\n", "*1\r\n|1\r\n+k\r\n+v\r\n:1\r\n",
	} {
		for i := 0; i < len(v); i++ {
			if frame([]byte(v[:i])) != HeldPart {
				t.Errorf("%q: its first %d bytes taken for a whole value", v, i)
			}
		}
		if frame([]byte(v)) != HeldWhole || frame([]byte(v+"*3\r\n")) != HeldWhole {
			t.Errorf("%q: not taken for a whole value", v)
		}
		// What the parser reads is what whole framed: the value and
		// nothing of what follows.
		p := NewReader(strings.NewReader(v+"+NEXT\r\n"), nil)
		if _, err := p.Next(); err != nil {
			t.Errorf("%q: the parser: %v", v, err)
		} else if rest := string(p.buf[p.r:p.w]); rest != "+NEXT\r\n" {
			t.Errorf("%q: the parser left %q, want the next value", v, rest)
		}
	}
	// What frame cannot frame it says so of: a streamed value's end is
	// known once it is read, a malformed one's never.
	for _, v := range []string{"*x\r\n", "$?\r\n", "*?\r\n", "*1\r\n$?\r\n;1\r\na\r\n;0\r\n", "\r\n", "$abc\r\n", "$5\n"} {
		if frame([]byte(v)) != HeldUnframed {
			t.Errorf("%q: not unframed", v)
		}
	}
}

// FuzzFrame: on any input, frame does not panic, and where it says a
// value is whole, the parser reads it from those bytes alone (it meets no
// end of input).
func FuzzFrame(f *testing.F) {
	for _, s := range []string{"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n", "|1\r\n+k\r\n+v\r\n:1\r\n", "%1\r\n:1\r\n:2\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if frame(b) != HeldWhole {
			return
		}
		p := NewReader(strings.NewReader(string(b)), nil)
		if _, err := p.Next(); err != nil && strings.Contains(err.Error(), "EOF") {
			t.Errorf("%q: whole, but the parser ran out of bytes: %v", b, err)
		}
	})
}
