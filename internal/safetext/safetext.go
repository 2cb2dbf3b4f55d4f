// Package safetext makes text that came from outside (a server's error
// replies, a trace's file name, a result file's test names, a user's URI)
// safe to print: control bytes and bidirectional overrides are escaped so
// they cannot drive the terminal or reorder what it shows, and secrets are
// replaced by "***".
package safetext

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mask replaces a secret in printed text.
const Mask = "***"

// Escape returns s with everything that could act on a terminal, or
// change how the text around it reads, written visibly: C0 controls
// (including \n, \r, \t and ESC), DEL, the C1 controls U+0080–U+009F and
// bytes that are not valid UTF-8 as \xNN; the bidirectional embeddings,
// overrides and isolates U+202A–U+202E and U+2066–U+2069 (which reorder
// what a terminal or a browser shows: "Trojan Source") as \uNNNN.
// Printable UTF-8 is kept, and a backslash is kept as is (the result is
// for reading, not parsing), so escaping escaped text changes nothing.
//
// Escape is the one escaping function of what pacer prints: Line, Text
// and Terminal are Escape keeping a line's, a text's or a terminal
// stream's own layout.
func Escape(s string) string { return escape(s, keepNone) }

// Line is Escape for one line of a message: line breaks and runs of white
// space become single spaces first (OneLine), then the rest is escaped.
func Line(s string) string { return escape(OneLine(s), keepNone) }

// Text is Escape keeping line breaks and tabs: for a multi-line text,
// such as a report or a page, whose lines are the writer's own.
func Text(s string) string { return escape(s, keepLayout) }

// Terminal is Text keeping also carriage returns and the erase-line
// sequence ESC [ K: what a progress line redrawn in place is made of.
// The stderr of the CLI passes through it, so nothing else of a control
// nature reaches the terminal, whatever its source.
func Terminal(s string) string { return escape(s, keepTerminal) }

// What escape keeps as is.
const (
	keepNone = iota
	keepLayout
	keepTerminal
)

func escape(s string, keep int) string {
	if isClean(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case keep >= keepLayout && (r == '\n' || r == '\t'),
			keep == keepTerminal && r == '\r':
			b.WriteByte(s[i])
			i++
		case keep == keepTerminal && r == 0x1b && strings.HasPrefix(s[i:], eraseLine):
			b.WriteString(eraseLine)
			i += len(eraseLine)
		case r == utf8.RuneError && size <= 1, r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			for j := 0; j < size || j == 0; j++ {
				writeHex(&b, s[i+j])
			}
			i += max(size, 1)
		case bidi(r):
			b.WriteString(`\u`)
			b.WriteString(strconv.FormatInt(int64(r), 16))
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// eraseLine is ESC [ K, which clears a line from the cursor to its end.
const eraseLine = "\x1b[K"

// bidi reports the bidirectional embeddings, overrides and isolates.
func bidi(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }

// isClean reports printable ASCII (and what keep keeps of the controls):
// text that needs no escaping, the common case, without a copy.
func isClean(s string, keep int) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x20 && c < 0x7f:
		case keep >= keepLayout && (c == '\n' || c == '\t'), keep == keepTerminal && c == '\r':
		default:
			return false
		}
	}
	return true
}

func writeHex(b *strings.Builder, c byte) {
	const hexdigits = "0123456789abcdef"
	b.WriteString(`\x`)
	b.WriteByte(hexdigits[c>>4])
	b.WriteByte(hexdigits[c&0xf])
}

// Redact replaces every occurrence of each non-empty secret in s with Mask.
// Longer secrets are replaced first, so a secret that contains another is
// masked whole.
func Redact(s string, secrets ...string) string {
	var list []string
	for _, sec := range secrets {
		if sec != "" {
			list = append(list, sec)
		}
	}
	// Longest first: "alice:pw" before "pw".
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && len(list[j]) > len(list[j-1]); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	for _, sec := range list {
		s = strings.ReplaceAll(s, sec, Mask)
	}
	return s
}

// userinfo matches the userinfo of a URI: scheme://user:password@ or
// scheme://password@ (a bare userinfo is how redis:// URIs pass a password).
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/\s]*)@`)

// RedactURI masks the password of every URI in s: scheme://user:pass@host
// becomes scheme://user:***@host and scheme://pass@host becomes
// scheme://***@host (redis:// URIs without a colon carry only a password).
func RedactURI(s string) string {
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfo.FindStringSubmatch(m)
		scheme, info := sub[1], sub[2]
		if user, _, ok := strings.Cut(info, ":"); ok {
			return scheme + user + ":" + Mask + "@"
		}
		return scheme + Mask + "@"
	})
}

// OneLine folds s onto one line: line breaks and runs of white space
// become single spaces.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
