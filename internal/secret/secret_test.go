package secret

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

func TestFindSecrets(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		env     string
		hidden  []string // must be masked
		shown   []string // must stay
		cmdLine bool
	}{
		{[]string{"pacer", "run", "-a", "pw1"}, "", []string{"pw1"}, nil, true},
		{[]string{"pacer", "run", "--a=pw2"}, "", []string{"pw2"}, nil, true},
		{[]string{"pacer", "run", "-a="}, "", nil, nil, false},
		{[]string{"pacer", "run"}, "envpw", []string{"envpw"}, nil, false},
		{[]string{"pacer", "bench", "-u", "redis://alice:pw3@h:1/0"}, "", []string{"pw3"}, []string{"alice", "h:1"}, true},
		{[]string{"pacer", "bench", "-u", "redis://pw4@h/0"}, "", []string{"pw4"}, []string{"h/0"}, true},
		{[]string{"pacer", "bench", "-u", "redis://alice:p%40ss@h/0"}, "", []string{"p%40ss", "p@ss"}, nil, true},
		{[]string{"pacer", "bench", "-u", "redis://h:1/0"}, "", nil, []string{"h:1"}, false},
		{[]string{"pacer", "bench", "-u", "redis://alice:@h/0"}, "", nil, []string{"alice"}, false},
		{[]string{"pacer", "run", "--user", "alice", "-a", "pw5"}, "", []string{"pw5"}, []string{"alice"}, true},
		{[]string{"pacer", "run", "--", "AUTH", "-a", "word"}, "", nil, []string{"word"}, false},
		{[]string{"pacer", "run", "-a"}, "", nil, nil, false},
		{[]string{"pacer", "run", "-a", `q"u\o`}, "", []string{`q"u\o`, `q\"u\\o`}, nil, true},
		// pacer ab's --a and --b are its targets' URIs, not passwords.
		{[]string{"pacer", "ab", "--a", "redis://127.0.0.1:6379", "--b=redis://127.0.0.1:6380"}, "", nil, []string{"127.0.0.1:6379", "127.0.0.1:6380"}, false},
		{[]string{"pacer", "ab", "--a", "redis://:pw6@h:1", "-b", "rediss://bob:pw7@h:2"}, "", []string{"pw6", "pw7"}, []string{"bob", "h:2"}, true},
		{[]string{"pacer", "run", "--sentinel-pass", "spw"}, "", []string{"spw"}, nil, true},
		{[]string{"pacer", "run", "-u", "redis+sentinel://app:dpw@h:1,h:2/m?sentinel_username=w&sentinel_password=s%21pw"}, "",
			[]string{"dpw", "s%21pw", "s!pw"}, []string{"app", "h:1", "sentinel_username=w"}, true},
	} {
		getenv := func(name string) string {
			if name == PasswordEnv {
				return tc.env
			}
			return ""
		}
		s := Find(tc.args, getenv)
		if s.OnCommandLine != tc.cmdLine {
			t.Errorf("%q: onCommandLine %v, want %v", tc.args, s.OnCommandLine, tc.cmdLine)
		}
		for _, h := range tc.hidden {
			if got := s.Redact("x " + h + " y"); strings.Contains(got, h) {
				t.Errorf("%q: %q not masked: %q", tc.args, h, got)
			}
		}
		for _, v := range tc.shown {
			if got := s.Redact("x " + v + " y"); !strings.Contains(got, v) {
				t.Errorf("%q: %q masked but it is no secret: %q", tc.args, v, got)
			}
		}
	}
	// Any URI's password is masked, known or not.
	if got := Find(nil, noEnv).Redact("redis://bob:other@h"); strings.Contains(got, "other") {
		t.Errorf("unknown URI password shown: %q", got)
	}
}

func TestAskPasswordReadsOneLine(t *testing.T) {
	in := strings.NewReader("pw1\r\nthe rest")
	pw, err := AskPassword(t.Context(), in, io.Discard)
	if err != nil || pw != "pw1" {
		t.Fatalf("AskPassword = %q, %v; want pw1", pw, err)
	}
	if rest, _ := io.ReadAll(in); string(rest) != "the rest" {
		t.Errorf("left %q on stdin, want the rest", rest)
	}
	if pw, err := AskPassword(t.Context(), strings.NewReader("last"), io.Discard); err != nil || pw != "last" {
		t.Errorf("a line without newline: %q, %v", pw, err)
	}
	for _, in := range []string{"", "\n", "\r\n", strings.Repeat("x", maxPasswordLen+1)} {
		if _, err := AskPassword(t.Context(), strings.NewReader(in), io.Discard); err == nil {
			t.Errorf("%.10q: no error", in)
		}
	}
	if _, err := AskPassword(t.Context(), failingReader{}, io.Discard); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing stdin: %v", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

func TestWriterMasks(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b, Find([]string{"pacer", "-a", "hunter2"}, noEnv))
	if n, err := io.WriteString(w, "ERR hunter2 redis://u:x@h\n"); err != nil || n != 26 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := b.String(); strings.Contains(got, "hunter2") || strings.Contains(got, ":x@") {
		t.Errorf("not masked: %q", got)
	}
}
