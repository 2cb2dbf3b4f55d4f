// Package safetext makes text that came from outside (a server's error
// replies, a user's URI) safe to print: control bytes are escaped so they
// cannot drive the terminal, and secrets are replaced by "***".
package safetext

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Mask replaces a secret in printed text.
const Mask = "***"

// Escape returns s with every byte that could act on a terminal written as
// \xNN: C0 controls (including \n, \r, \t and ESC), DEL, the C1 controls
// U+0080–U+009F and bytes that are not valid UTF-8. Printable UTF-8 is kept,
// and a backslash is kept as is (the result is for reading, not parsing).
func Escape(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			for j := 0; j < size || j == 0; j++ {
				writeHex(&b, s[i+j])
			}
			i += max(size, 1)
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
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
