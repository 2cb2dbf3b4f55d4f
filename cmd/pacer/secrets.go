package main

import (
	"context"
	"io"

	"github.com/pacer-load/pacer/internal/secret"
	"github.com/pacer-load/pacer/scheduler"
)

// Passwords are kept out of everything pacer prints (internal/secret):
// Main finds them in the arguments and the environment, --askpass adds
// its own, and the commands reach them through their context.

// passwordEnv is redis-cli's variable for the password, read by -a.
const passwordEnv = secret.PasswordEnv

// passwordWarning is printed once when a password came on the command line,
// in the spirit of redis-cli's "Using a password with '-a' or '-u' option
// on the command line interface may not be safe".
const passwordWarning = "pacer: warning: a password on the command line is visible to other users in the process list; use REDISCLI_AUTH or --askpass instead"

type secretsKey struct{}

// withSecrets makes the secrets reachable from a command's context.
func withSecrets(ctx context.Context, s *secret.Set) context.Context {
	return context.WithValue(ctx, secretsKey{}, s)
}

// secretsFrom returns the secrets Main found (nil, which still masks URI
// passwords, outside Main).
func secretsFrom(ctx context.Context) *secret.Set {
	s, _ := ctx.Value(secretsKey{}).(*secret.Set)
	return s
}

// redactResult masks secrets in the server text a result carries.
func redactResult(ctx context.Context, res *scheduler.Result) { res.Redact(secretsFrom(ctx).Redact) }

// redactingWriter masks the secrets in everything written to w: for server
// text shown on stdout (error replies with -e).
func redactingWriter(ctx context.Context, w io.Writer) io.Writer {
	return secret.Writer(w, secretsFrom(ctx))
}
