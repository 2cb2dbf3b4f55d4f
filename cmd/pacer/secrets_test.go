package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
)

const secretPass = "SECRETPASS"

// noSecret fails t when the password shows in any of the texts.
func noSecret(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, secretPass) {
			t.Errorf("%s: the password shows in %q", what, s)
		}
	}
}

// TestBadURINeverPrintsThePassword: every malformed part of -u is reported
// (exit 2) without the password, in one line: the command-line warning
// waits for a run (a usage error's contract is one line on stderr).
func TestBadURINeverPrintsThePassword(t *testing.T) {
	t.Parallel()
	for _, uri := range []string{
		"redis://alice:SECRETPASS@127.0.0.1:notaport/0", // bad port: url.Parse fails
		"redis://alice:SECRETPASS@127.0.0.1:6379/x",     // bad database
		"redis://alice:SECRETPASS@127.0.0.1:6379/-1",    // negative database
		"rediss://alice:SECRETPASS@127.0.0.1:6379/x",    // TLS scheme
		"http://alice:SECRETPASS@127.0.0.1/0",           // wrong scheme
		"redis://alice:SECRETPASS@/0",                   // no host
		"redis://alice:SECRET%zzPASS@127.0.0.1/0",       // bad escape in the password
		"redis://SECRETPASS@127.0.0.1:6379/x",           // password-only form
		"redis://alice:SECRET/PASS@127.0.0.1:6379/x",    // a '/' inside the password
		"redis://alice:SECRET\"PASS@127.0.0.1:6379/x",   // a quote: %q escapes it
		"redis://alice:SECRETPASS@127.0.0.1:6379/x y",   // a space
	} {
		code, stdout, stderr := pacer(t, "bench", "-u", uri, "-n", "1")
		if code != exitUsage {
			t.Errorf("-u %q: exit %d, want 2 (stderr %q)", uri, code, stderr)
		}
		for _, s := range []string{stdout, stderr} {
			if strings.Contains(s, "SECRET") {
				t.Errorf("-u %q: the password shows in %q", uri, s)
			}
		}
		if strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, passwordWarning) {
			t.Errorf("-u %q: want one line and no warning, stderr %q", uri, stderr)
		}
	}
}

// TestPasswordWarning: once when the password is an argument, never when it
// comes from REDISCLI_AUTH.
func TestPasswordWarning(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	args := append([]string{"bench", "-n", "10", "-c", "1", "-q", "-t", "ping"}, hostPort(t, srv.Addr)...)
	_, _, stderr := pacer(t, append(args, "-a", secretPass)...)
	if strings.Count(stderr, passwordWarning) != 1 {
		t.Errorf("-a: want the warning once, stderr %q", stderr)
	}
	noSecret(t, "-a", stderr)
	t.Setenv(passwordEnv, secretPass)
	_, _, stderr = pacer(t, args...)
	if strings.Contains(stderr, "warning") {
		t.Errorf("REDISCLI_AUTH: no warning expected, stderr %q", stderr)
	}
}

// TestServerEchoingThePasswordIsRedacted: a server that repeats AUTH's
// argument in its error text, at the handshake or in later error replies,
// never gets the password printed or written, in any command or format.
func TestServerEchoingThePasswordIsRedacted(t *testing.T) {
	t.Parallel()
	echoAuth := hostile.Start(t, hostile.EchoAuthError)
	// Accepts AUTH, then quotes the password back in every error reply,
	// as the first word too.
	echoLater := hostile.Start(t, func(c *hostile.Client) {
		pw := ""
		for {
			args, err := c.ReadCommand()
			if err != nil {
				return
			}
			reply := "-ERR you said " + pw + "\r\n"
			switch {
			case len(args) > 1 && strings.EqualFold(args[0], "AUTH"):
				pw, reply = args[len(args)-1], "+OK\r\n"
			case len(args) > 0 && strings.EqualFold(args[0], "GET"):
				reply = "-" + pw + " you said " + pw + "\r\n"
			}
			if c.Write(reply) != nil {
				return
			}
		}
	})
	dir := t.TempDir()
	for i, tc := range [][]string{
		append([]string{"run", "--rate", "1k", "-n", "50", "-c", "2", "-t", "get"}, hostPort(t, echoAuth.Addr)...),
		append([]string{"run", "--rate", "1k", "-n", "50", "-c", "2", "-t", "get", "--user", "alice"}, hostPort(t, echoAuth.Addr)...),
		append([]string{"bench", "-n", "50", "-c", "2", "-t", "get"}, hostPort(t, echoAuth.Addr)...),
		append([]string{"compare", "--rate", "1k", "--duration", "200ms", "-c", "2", "-q"}, hostPort(t, echoAuth.Addr)...),
		append([]string{"fill", "-r", "10", "-c", "1"}, hostPort(t, echoAuth.Addr)...),
		append([]string{"run", "--rate", "1k", "-n", "50", "-c", "2", "-t", "get,set", "-e", "--lag-limit", "1s"}, hostPort(t, echoLater.Addr)...),
		append([]string{"run", "--rate", "1k", "-n", "50", "-c", "2", "--mix", "get:1,set:1", "-e", "--lag-limit", "1s"}, hostPort(t, echoLater.Addr)...),
		append([]string{"bench", "-n", "50", "-c", "2", "-t", "get,set", "-e"}, hostPort(t, echoLater.Addr)...),
		append([]string{"bench", "-n", "50", "-c", "2", "-t", "get"}, hostPort(t, echoLater.Addr)...),
		append([]string{"compare", "--rate", "1k", "--duration", "200ms", "-c", "2", "-q"}, hostPort(t, echoLater.Addr)...),
	} {
		out := filepath.Join(dir, "r.json")
		os.Remove(out)
		args := append(tc, "-a", secretPass)
		if tc[0] != "fill" {
			args = append(args, "--json", out)
		}
		code, stdout, stderr := pacer(t, args...)
		json, _ := os.ReadFile(out)
		noSecret(t, strings.Join(args, " "), stdout, stderr, string(json))
		if code == exitOK || code == exitUsage {
			t.Errorf("case %d %q: exit %d, want a failure (stderr %q)", i, args, code, stderr)
		}
	}
}

// TestWrongPasswordAgainstRedis: a real redis-server with requirepass.
func TestWrongPasswordAgainstRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "--requirepass", "right-password")
	for _, cmd := range [][]string{
		{"run", "--rate", "1k", "-n", "10", "-c", "2", "-t", "get"},
		{"bench", "-n", "10", "-c", "2", "-t", "get"},
	} {
		args := append(append(cmd, hostPort(t, srv.Addr)...), "-a", secretPass)
		code, stdout, stderr := pacer(t, args...)
		noSecret(t, cmd[0], stdout, stderr)
		if code != exitFailed {
			t.Errorf("%s: exit %d, want 1 (stderr %q)", cmd[0], code, stderr)
		}
	}
}
