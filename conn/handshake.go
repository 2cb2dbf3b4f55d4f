package conn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/internal/usage"
)

// step is one command of the handshake.
type step struct {
	name  string
	args  []string
	probe bool // the PING that checks a server when nothing else does
}

// authName names the AUTH step in errors: AUTH with one argument
// authenticates Redis's "default" user.
func authName(user string) string { return "AUTH as user " + strconv.Quote(user) }

// probeName names the probe in errors.
const probeName = "PING (connection check)"

// steps lists the handshake's commands in the order they are sent.
func (o *Options) steps() []step {
	var steps []step
	if o.Password != "" {
		// The step names the user, never the password: a wrong password
		// reads "AUTH as user "alice" failed: WRONGPASS ...".
		if o.User != "" {
			steps = append(steps, step{name: authName(o.User), args: []string{"AUTH", o.User, o.Password}})
		} else {
			steps = append(steps, step{name: authName("default"), args: []string{"AUTH", o.Password}})
		}
	}
	if o.RESP3 {
		steps = append(steps, step{name: "HELLO 3", args: []string{"HELLO", "3"}})
	}
	if o.ClientTracking {
		steps = append(steps, step{name: "CLIENT TRACKING", args: []string{"CLIENT", "TRACKING", "on"}})
	}
	if o.DB != 0 {
		steps = append(steps, step{name: "SELECT", args: []string{"SELECT", strconv.Itoa(o.DB)}})
	}
	if o.ReadOnly {
		steps = append(steps, step{name: "READONLY", args: []string{"READONLY"}})
	}
	if len(steps) == 0 && !o.SkipProbe {
		steps = append(steps, step{name: probeName, args: []string{"PING"}, probe: true})
	}
	return steps
}

// handshake sends every step in one write and checks each reply in turn.
// A connection counts as open only when every step was answered, and not
// with an error (except the probe's "unknown command": the server
// answered). RESP3 pushes are not replies and are skipped.
func (c *Conn) handshake(ctx context.Context, o Options) error {
	steps := o.steps()
	if len(steps) == 0 {
		return nil
	}
	var buf []byte
	for _, s := range steps {
		buf = AppendCommand(buf, s.args...)
	}
	if _, werr := c.writeRaw(buf); werr != nil {
		// A server that refuses a connection (Redis beyond maxclients)
		// writes why and closes, and the write may fail on the reset: its
		// words say more than the reset does.
		// A TLS server that refuses the session (no client certificate)
		// says why in an alert.
		r, err := c.handshakeReply()
		switch {
		case err == nil && r.Err:
			return fmt.Errorf("%s failed: %s", steps[0].name, c.rd.ErrorText)
		case remoteAlert(err):
			return fmt.Errorf("%w: the server ended the TLS session: %w", ErrTLS, err)
		}
		return c.stepErr(ctx, o, steps[0], werr)
	}
	for _, s := range steps {
		r, err := c.handshakeReply()
		if remoteAlert(err) {
			return fmt.Errorf("%w: the server ended the TLS session: %w", ErrTLS, err)
		}
		if err != nil {
			return c.stepErr(ctx, o, s, err)
		}
		if r.Err && !(s.probe && answeredAnyway(c.rd.ErrorText)) {
			return fmt.Errorf("%s failed: %s", s.name, c.rd.ErrorText)
		}
	}
	return nil
}

// handshakeReply reads the next reply that is not a push.
func (c *Conn) handshakeReply() (Reply, error) {
	for {
		r, err := c.rd.Next()
		if err != nil || !r.Push {
			return r, err
		}
	}
}

// stepErr says why step s got no reply: the dial's context ended (the
// socket was closed to interrupt the handshake), the server closed the
// connection, or the transport failed.
func (c *Conn) stepErr(ctx context.Context, o Options, s step, err error) error {
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: no reply within %v: %w", s.name, o.DialTimeout, ctx.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", s.name, ctx.Err())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return usage.Option("", "%s: the server closed the connection without replying"+tlsHint(o)+": %w", s.name, err)
	case errors.Is(err, syscall.ECONNRESET):
		return usage.Option("", "%s: the server reset the connection"+tlsHint(o)+": %w", s.name, err)
	}
	return fmt.Errorf("%s: %w", s.name, err)
}

// tlsHint is what a connection that the server dropped without a word
// adds: a TLS port does that to a client that does not speak TLS, and a
// server that requires client certificates to a TLS client without one
// (its alert may be lost in the reset).
func tlsHint(o Options) string {
	if o.TLS != nil {
		return " (after the TLS handshake: does the server require a client certificate?)"
	}
	return " (a TLS port? connect with {tls})"
}

// answeredAnyway reports whether an error reply to the probe still shows a
// live server that serves this client: it does not know PING (renamed
// away, a proxy) or this user may not run it.
func answeredAnyway(text []byte) bool {
	t := bytes.ToLower(text)
	return bytes.Contains(t, []byte("unknown command")) ||
		bytes.Contains(t, []byte("unknown or disabled command")) ||
		bytes.HasPrefix(t, []byte("noperm"))
}

// sanitize returns err with its text made safe to print: the password
// (alone, as user:password, and as %q would quote it) replaced by
// safetext.Mask, then control bytes escaped. The result unwraps to the
// outermost error of err's chain whose own text needs no change, so
// errors.Is still finds context, transport and protocol errors, and no
// error reachable from it carries the password.
func (o *Options) sanitize(err error) error {
	raw := err.Error()
	msg := o.safeText(raw)
	if msg == raw {
		return err
	}
	var cause error
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		if t := e.Error(); o.safeText(t) == t {
			cause = e
			break
		}
	}
	return &safeError{msg: msg, cause: cause}
}

// safeText redacts the password from s and escapes its control bytes.
func (o *Options) safeText(s string) string {
	var secrets []string
	if o.Password != "" {
		secrets = append(secrets, o.Password, quoted(o.Password))
		if o.User != "" {
			secrets = append(secrets, o.User+":"+o.Password, quoted(o.User+":"+o.Password))
		}
	}
	s = safetext.Redact(s, secrets...)
	// A server's error text is kept up to 256 bytes: an echoed password
	// may be cut, leaving its start at the end of the text.
	for _, sec := range secrets {
		for k := len(sec) - 1; k >= minSecretPrefix; k-- {
			if strings.HasSuffix(s, sec[:k]) {
				s = s[:len(s)-k] + safetext.Mask
				break
			}
		}
	}
	return safetext.Escape(s)
}

// minSecretPrefix is the shortest start of a password that is masked when a
// text ends with it; shorter ones match ordinary text too often.
const minSecretPrefix = 3

// quoted is s as it appears inside a %q (Go-quoted) string.
func quoted(s string) string {
	q := strconv.Quote(s)
	return strings.TrimSuffix(strings.TrimPrefix(q, `"`), `"`)
}

// safeError is an error whose text was sanitized.
type safeError struct {
	msg   string
	cause error
}

func (e *safeError) Error() string { return e.msg }
func (e *safeError) Unwrap() error { return e.cause }

// remoteAlert reports whether err is a TLS alert the server sent (Go
// reports them as a net.OpError whose Op is "remote error").
func remoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}
