package safetext

import "testing"

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ERR plain text", "ERR plain text"},
		{"ERR \x1b[31mred\x1b[0m", `ERR \x1b[31mred\x1b[0m`},
		{"line\r\nnext\ttab", `line\x0d\x0anext\x09tab`},
		{"del\x7f", `del\x7f`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"c1 \u009b2J", `c1 \xc2\x9b2J`},
		{"ünïcødé ✓", "ünïcødé ✓"},
		{"", ""},
		// Trojan Source: the overrides and isolates reorder what is shown.
		{"GET\u202e\u2066gnp.exe\u2069\u202c", `GET\u202e\u2066gnp.exe\u2069\u202c`},
		{"\u202a\u202b\u202d\u2067\u2068", `\u202a\u202b\u202d\u2067\u2068`},
		{"OSC \x1b]52;c;aGk=\x07 BEL", `OSC \x1b]52;c;aGk=\x07 BEL`},
		{"already \\x1b escaped", "already \\x1b escaped"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Escape(Escape(c.in)); again != Escape(c.in) {
			t.Errorf("Escape(Escape(%q)) = %q: escaped twice", c.in, again)
		}
	}
}

// TestLayouts: Line folds white space onto one line and escapes the rest;
// Text keeps line breaks and tabs; Terminal keeps also \r and ESC [ K,
// the progress line's own, and nothing else of ESC.
func TestLayouts(t *testing.T) {
	const in = "a\tb\r\nfile\nname \x1b[31mred\x1b[K\u202e."
	for _, c := range []struct {
		f    func(string) string
		name string
		want string
	}{
		{Line, "Line", `a b file name \x1b[31mred\x1b[K\u202e.`},
		{Text, "Text", "a\tb\\x0d\nfile\nname \\x1b[31mred\\x1b[K\\u202e."},
		{Terminal, "Terminal", "a\tb\r\nfile\nname \\x1b[31mred\x1b[K\\u202e."},
	} {
		if got := c.f(in); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.name, in, got, c.want)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, c := range []struct {
		in      string
		secrets []string
		want    string
	}{
		{"WRONGPASS invalid password: hunter2", []string{"hunter2"}, "WRONGPASS invalid password: ***"},
		{"auth alice:pw failed, pw", []string{"pw", "alice:pw"}, "auth *** failed, ***"},
		{"nothing to hide", []string{"", "absent"}, "nothing to hide"},
	} {
		if got := Redact(c.in, c.secrets...); got != c.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", c.in, c.secrets, got, c.want)
		}
	}
}

func TestRedactURI(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`-u "redis://alice:SECRETPASS@127.0.0.1:6379/x": bad db`, `-u "redis://alice:***@127.0.0.1:6379/x": bad db`},
		{"rediss://onlypass@host/0", "rediss://***@host/0"},
		{"redis://host:6379/0 has no userinfo", "redis://host:6379/0 has no userinfo"},
		{"two redis://a:b@h and redis://c:d@i", "two redis://a:***@h and redis://c:***@i"},
		{"redis://:pw@h", "redis://:***@h"},
		{"redis://alice:p@ss@h:1/0", "redis://alice:***@h:1/0"},
	} {
		if got := RedactURI(c.in); got != c.want {
			t.Errorf("RedactURI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
