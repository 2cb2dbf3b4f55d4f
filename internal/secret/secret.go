// Package secret keeps the passwords pacer was given (-a, REDISCLI_AUTH,
// the password of -u, --askpass) in every form they may take in printed
// text, and masks them: in pacer's own messages (a bad -u quoted back) and
// in a server's error text (a server that echoes AUTH's argument).
// Usernames are not secrets and are left alone.
package secret

import (
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pacer-load/pacer/internal/safetext"
)

// PasswordEnv is redis-cli's variable for the password, read by -a.
const PasswordEnv = "REDISCLI_AUTH"

// Set holds the secrets. A nil *Set masks only the passwords of URIs.
type Set struct {
	mu    sync.RWMutex // --askpass adds a password once output has begun
	forms []string
	// OnCommandLine is set when a password was an argument (visible in
	// the process list), not only in the environment.
	OnCommandLine bool
}

// Find reads the passwords from the raw arguments (args[0] is the
// program) and the environment. It scans the arguments itself, before any
// flag parsing, so that a command line the parser rejects is masked too.
func Find(args []string, getenv func(string) string) *Set {
	s := &Set{}
	s.Add(getenv(PasswordEnv))
	// URIs carry a password after the user: -u, and pacer ab's --a and
	// --b (its targets; ab has no -a).
	uris := map[string]bool{"u": true}
	if len(args) > 1 && args[1] == "ab" {
		uris = map[string]bool{"u": true, "a": true, "b": true}
	}
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break // a command follows: its words are the user's, not ours
		}
		name, value, inline := flagParts(arg)
		if name != "a" && name != "u" && name != "requirepass" && name != "sentinel-pass" && !uris[name] {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		switch {
		case uris[name]:
			if pw := append(uriPasswords(value), sentinelPasswords(value)...); len(pw) > 0 {
				s.Add(pw...)
				s.OnCommandLine = true
			}
		case value != "": // -a, --requirepass, --sentinel-pass
			s.Add(value)
			s.OnCommandLine = true
		}
	}
	return s
}

// flagParts splits -name, --name and -name=value; name is "" for an
// argument that is not a flag.
func flagParts(arg string) (name, value string, inline bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return "", "", false
	}
	name = strings.TrimPrefix(arg[1:], "-")
	name, value, inline = strings.Cut(name, "=")
	return name, value, inline
}

// uriPasswords returns the password of a redis:// URI as typed and decoded:
// what follows the first ':' of the userinfo, or the whole userinfo when it
// has no ':' (redis://password@host, as -u reads it). It works on the text,
// so a URI that does not parse (a bad port, a bad escape) is covered too;
// the userinfo ends at the last '@', as a password may hold '@' or '/'.
func uriPasswords(s string) []string {
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+len("://"):]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return nil
	}
	info := rest[:at]
	pw := info
	if _, p, ok := strings.Cut(info, ":"); ok {
		pw = p
	}
	if pw == "" {
		return nil
	}
	out := []string{pw}
	if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
		out = append(out, dec)
	}
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}

// sentinelPasswords returns the sentinel_password option of a Sentinel
// URI (redis+sentinel://...?sentinel_password=...), as typed and decoded.
func sentinelPasswords(s string) []string {
	_, query, ok := strings.Cut(s, "?")
	if !ok {
		return nil
	}
	var out []string
	for _, kv := range strings.Split(query, "&") {
		if v, ok := strings.CutPrefix(kv, "sentinel_password="); ok && v != "" {
			out = append(out, v)
			if dec, err := url.QueryUnescape(v); err == nil && dec != v {
				out = append(out, dec)
			}
		}
	}
	return out
}

// Add records each secret with the forms it takes once quoted (%q, JSON),
// URL-escaped or escaped for a terminal. It does nothing on a nil Set.
func (s *Set) Add(values ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if v == "" {
			continue
		}
		forms := []string{v, unquote(strconv.Quote(v)), unquote(strconv.QuoteToASCII(v)),
			url.PathEscape(v), url.QueryEscape(v), safetext.Escape(v)}
		if b, err := json.Marshal(v); err == nil {
			forms = append(forms, unquote(string(b)))
		}
		for _, f := range forms {
			if f != "" && !slices.Contains(s.forms, f) {
				s.forms = append(s.forms, f)
			}
		}
	}
}

func unquote(q string) string { return q[1 : len(q)-1] }

// Redact masks every known secret and the password of any URI in text.
func (s *Set) Redact(text string) string {
	if s != nil {
		s.mu.RLock()
		text = safetext.Redact(text, s.forms...)
		s.mu.RUnlock()
	}
	return safetext.RedactURI(text)
}

// Writer masks the secrets of s in everything written to w: for server
// text shown on stdout (error replies with -e).
func Writer(w io.Writer, s *Set) io.Writer { return redactWriter{w: w, s: s} }

type redactWriter struct {
	w io.Writer
	s *Set
}

func (r redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.s.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
