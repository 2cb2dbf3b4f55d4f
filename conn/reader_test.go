package conn

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type wantReply struct {
	err  bool
	push bool
	code string
}

func TestReaderSkipsEveryType(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []wantReply
	}{
		{"simple string", "+OK\r\n", []wantReply{{}}},
		{"error with code", "-WRONGTYPE Operation against a key\r\n", []wantReply{{err: true, code: "WRONGTYPE"}}},
		{"error without message", "-ERR\r\n", []wantReply{{err: true, code: "ERR"}}},
		{"long error code is cut to 15 bytes", "-ABCDEFGHIJKLMNOPQRSTUVWXYZ x\r\n", []wantReply{{err: true, code: "ABCDEFGHIJKLMNO"}}},
		{"integer", ":1000\r\n", []wantReply{{}}},
		{"bulk", "$5\r\nhello\r\n", []wantReply{{}}},
		{"empty bulk", "$0\r\n\r\n", []wantReply{{}}},
		{"bulk containing CRLF", "$4\r\n\r\n\r\n\r\n", []wantReply{{}}},
		{"nil bulk", "$-1\r\n", []wantReply{{}}},
		{"nil array", "*-1\r\n", []wantReply{{}}},
		{"empty array", "*0\r\n", []wantReply{{}}},
		{"array", "*2\r\n$3\r\nfoo\r\n:1\r\n", []wantReply{{}}},
		{"nested arrays", "*2\r\n*2\r\n+a\r\n*1\r\n$1\r\nb\r\n*0\r\n", []wantReply{{}}},
		{"error inside array is not a top-level error", "*2\r\n-ERR x\r\n+OK\r\n", []wantReply{{}}},
		{"RESP3 null", "_\r\n", []wantReply{{}}},
		{"RESP3 double", ",3.14\r\n", []wantReply{{}}},
		{"RESP3 boolean", "#t\r\n", []wantReply{{}}},
		{"RESP3 big number", "(3492890328409238509324850943850943825024385\r\n", []wantReply{{}}},
		{"RESP3 verbatim", "=15\r\ntxt:Some string\r\n", []wantReply{{}}},
		{"RESP3 blob error", "!21\r\nSYNTAX invalid syntax\r\n", []wantReply{{err: true, code: "SYNTAX"}}},
		{"RESP3 map", "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n:2\r\n", []wantReply{{}}},
		{"RESP3 set", "~2\r\n+a\r\n+b\r\n", []wantReply{{}}},
		{"RESP3 attribute before reply", "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*1\r\n:2\r\n", []wantReply{{}}},
		{"RESP3 attribute inside array", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n", []wantReply{{}}},
		{"RESP3 push", ">2\r\n+invalidate\r\n*1\r\n+k\r\n+OK\r\n", []wantReply{{push: true}, {}}},
		{"RESP3 streamed string", "$?\r\n;4\r\nHell\r\n;1\r\no\r\n;0\r\n", []wantReply{{}}},
		{"RESP3 streamed array", "*?\r\n:1\r\n+x\r\n.\r\n", []wantReply{{}}},
		{"pipeline of mixed replies", "+OK\r\n-ERR a\r\n:1\r\n$-1\r\n", []wantReply{{}, {err: true, code: "ERR"}, {}, {}}},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			var rd io.Reader = strings.NewReader(tc.in)
			if oneByte {
				rd = iotest.OneByteReader(rd)
			}
			p := NewReader(rd, nil)
			for i, w := range tc.want {
				r, err := p.Next()
				if err != nil {
					t.Fatalf("%s (one byte %v): reply %d: %v", tc.name, oneByte, i, err)
				}
				got := wantReply{err: r.Err, push: r.Push, code: string(r.Code())}
				if got != w {
					t.Errorf("%s (one byte %v): reply %d = %+v, want %+v", tc.name, oneByte, i, got, w)
				}
			}
			if _, err := p.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: after the last reply got %v, want unexpected EOF", tc.name, err)
			}
		}
	}
}

func TestReaderErrorText(t *testing.T) {
	p := NewReader(strings.NewReader("-ERR unknown command 'FOO'\r\n"), nil)
	if _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	if got := string(p.ErrorText); got != "ERR unknown command 'FOO'" {
		t.Fatalf("ErrorText = %q", got)
	}
}

func TestReaderRejectsMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"unknown type byte", "?what\r\n"},
		{"empty line", "\r\n"},
		{"LF without CR", "+OK\n"},
		{"bad bulk length", "$abc\r\n"},
		{"negative bulk length", "$-5\r\n"},
		{"bulk without CRLF", "$3\r\nfooXY"},
		{"huge bulk length", "$99999999999999999999\r\n"},
		{"bulk over limit", "$2199023255553\r\n"},
		{"huge array count", "*99999999999999999999\r\n"},
		{"too deep", strings.Repeat("*1\r\n", 100) + ":1\r\n"},
		{"bad streamed chunk", "$?\r\nxx\r\n"},
		{"negative blob error", "!-1\r\n"},
	}
	for _, tc := range tests {
		p := NewReader(strings.NewReader(tc.in), nil)
		_, err := p.Next()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !errors.Is(err, ErrProtocol) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: error %v is neither a protocol error nor EOF", tc.name, err)
		}
	}
}

func TestReaderLongLine(t *testing.T) {
	long := "+" + strings.Repeat("a", 200_000) + "\r\n+OK\r\n"
	p := NewReader(strings.NewReader(long), nil)
	for i := 0; i < 2; i++ {
		if _, err := p.Next(); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	tooLong := "+" + strings.Repeat("a", maxLineLen+10) + "\r\n"
	if _, err := NewReader(strings.NewReader(tooLong), nil).Next(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("line over the limit: %v", err)
	}
}

func TestReaderTimestampsLastRead(t *testing.T) {
	// Two reads: the reply completes in the second, so its read time is
	// that read's.
	clock := int64(0)
	now := func() int64 { clock += 10; return clock }
	p := NewReader(io.MultiReader(strings.NewReader("$5\r\nhel"), strings.NewReader("lo\r\n")), now)
	if _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	if got := p.Times().Read; got != 20 {
		t.Fatalf("Times().Read = %d, want the second read's 20", got)
	}
}

func TestAppendCommand(t *testing.T) {
	got := AppendCommand(nil, "SET", "k", "")
	if want := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"; string(got) != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "$?\r\n;1\r\na\r\n;0\r\n",
		"|1\r\n+a\r\n+b\r\n+c\r\n", ">1\r\n+p\r\n", "%1\r\n+a\r\n+b\r\n", "*?\r\n.\r\n", "!3\r\nERR\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewReader(bytes.NewReader(b), nil)
		for i := 0; i < 1000; i++ {
			if _, err := p.Next(); err != nil {
				return
			}
		}
	})
}

func FuzzReadValue(f *testing.F) {
	for _, s := range []string{"*2\r\n$3\r\nfoo\r\n:1\r\n", "%1\r\n+a\r\n$-1\r\n", "$5\r\nhello\r\n", "-ERR x\r\n", "*1\r\n*1\r\n*1\r\n:1\r\n",
		"$99999999\r\n", "*99999999\r\n", "|1\r\n+a\r\n+b\r\n+c\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := NewReader(bytes.NewReader(b), nil)
		for i := 0; i < 100; i++ {
			if _, err := p.ReadValue(); err != nil {
				if _, ok := err.(*ServerError); !ok {
					return
				}
			}
		}
	})
}
