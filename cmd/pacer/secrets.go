package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
)

// passwordEnv is redis-cli's variable for the password, read by -a.
const passwordEnv = "REDISCLI_AUTH"

// passwordWarning is printed once when a password came on the command line,
// in the spirit of redis-cli's "Using a password with '-a' or '-u' option
// on the command line interface may not be safe".
const passwordWarning = "pacer: warning: a password on the command line is visible to other users in the process list; use REDISCLI_AUTH or --askpass instead"

// secrets are the passwords pacer was given (-a, REDISCLI_AUTH, the
// password of -u), in every form they may take in printed text, so that
// nothing pacer prints shows them: not its own messages (a bad -u quoted
// back), not a server's error text (a server that echoes AUTH's argument).
// Usernames are not secrets and are left alone.
type secrets struct {
	mu    sync.RWMutex // --askpass adds a password once output has begun
	forms []string
	// onCommandLine is set when a password was an argument (visible in the
	// process list), not only in the environment.
	onCommandLine bool
}

// findSecrets reads the passwords from the raw arguments and the
// environment. It scans the arguments itself, before any flag parsing, so
// that a command line the parser rejects is masked too.
func findSecrets(args []string, getenv func(string) string) *secrets {
	s := &secrets{}
	s.add(getenv(passwordEnv))
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break // a command follows: its words are the user's, not ours
		}
		name, value, inline := flagParts(arg)
		if name != "a" && name != "u" && name != "requirepass" {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		switch name {
		case "a", "requirepass":
			if value != "" {
				s.add(value)
				s.onCommandLine = true
			}
		case "u":
			if pw := uriPasswords(value); len(pw) > 0 {
				s.add(pw...)
				s.onCommandLine = true
			}
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

// add records each secret with the forms it takes once quoted (%q, JSON),
// URL-escaped or escaped for a terminal.
func (s *secrets) add(values ...string) {
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
			if f != "" && !contains(s.forms, f) {
				s.forms = append(s.forms, f)
			}
		}
	}
}

func unquote(q string) string { return q[1 : len(q)-1] }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// redact masks every known secret and the password of any URI in text.
func (s *secrets) redact(text string) string {
	if s != nil {
		s.mu.RLock()
		text = safetext.Redact(text, s.forms...)
		s.mu.RUnlock()
	}
	return safetext.RedactURI(text)
}

type secretsKey struct{}

// withSecrets makes the secrets reachable from a command's context.
func withSecrets(ctx context.Context, s *secrets) context.Context {
	return context.WithValue(ctx, secretsKey{}, s)
}

// secretsFrom returns the secrets Main found (nil, which still masks URI
// passwords, outside Main).
func secretsFrom(ctx context.Context) *secrets {
	s, _ := ctx.Value(secretsKey{}).(*secrets)
	return s
}

// redactResult masks secrets in the server text a result carries (the
// first error, error codes, the verdict's reason), before it is rendered or
// written: a server may echo AUTH's argument in its error replies.
func redactResult(ctx context.Context, res *scheduler.Result) {
	if res == nil {
		return
	}
	s := secretsFrom(ctx)
	res.FirstError = s.redact(res.FirstError)
	res.ErrorCodes = redactCodes(s, res.ErrorCodes)
	for i := range res.Commands {
		res.Commands[i].ErrorCodes = redactCodes(s, res.Commands[i].ErrorCodes)
	}
}

func redactCodes(s *secrets, codes map[string]uint64) map[string]uint64 {
	if codes == nil {
		return nil
	}
	out := make(map[string]uint64, len(codes))
	for k, v := range codes {
		out[s.redact(k)] += v
	}
	return out
}

// redactingWriter masks the secrets in everything written to w: for server
// text shown on stdout (error replies with -e).
func redactingWriter(ctx context.Context, w io.Writer) io.Writer {
	s := secretsFrom(ctx)
	return redactWriter{w: w, s: s}
}

type redactWriter struct {
	w io.Writer
	s *secrets
}

func (r redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.s.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// askPrompt is redis-cli's --askpass prompt.
const askPrompt = "Please input password: "

// maxPasswordLen bounds the line --askpass reads from a pipe.
const maxPasswordLen = 4096

// askPassword reads --askpass's password: from the terminal without echo
// (the prompt on prompt) when in is one, else the first line of in, read
// byte by byte so that nothing after it is consumed (bench -x reads the
// rest). A trailing \r\n or \n is dropped; an empty password is an error.
func askPassword(in io.Reader, prompt io.Writer) (string, error) {
	if in == nil {
		in = os.Stdin
	}
	var pw []byte
	if f, ok := in.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, askPrompt)
		var err error
		pw, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the password from the terminal: %w", err)
		}
	} else {
		var b [1]byte
		for {
			n, err := in.Read(b[:])
			if n == 1 {
				if b[0] == '\n' {
					break
				}
				if len(pw) == maxPasswordLen {
					return "", fmt.Errorf("the first line of stdin is longer than %d bytes: not a password", maxPasswordLen)
				}
				pw = append(pw, b[0])
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return "", fmt.Errorf("read the password from stdin: %w", err)
			}
		}
	}
	s := strings.TrimSuffix(string(pw), "\r")
	if s == "" {
		return "", errors.New("no password given (an empty line, or nothing on stdin)")
	}
	return s, nil
}
