// Package endpoint is the system under test as pacer reaches it: pools of
// connections to a server, a Redis Cluster's primaries and slot maps set up
// for the drivers (openloop.Cluster, closedloop.Cluster), and what
// the server says about itself around each test (package serverinfo). It
// dials and asks; it never prints: what the user should know goes to
// Target.Say, one line at a time.
//
// It sits just below the experiments (package experiment and the command
// use it to set up each run) and above the drivers and the transport:
// scheduler, cluster, conn and serverinfo.
package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/sentinel"
)

// Target is where the load goes: a server, or with Cluster a Redis Cluster
// that Options reaches through a seed.
type Target struct {
	Options conn.Options
	Cluster bool
	// Sentinels, when set, name the primary (see FollowSentinels).
	Sentinels *sentinel.Config
	// Say receives notes for the user (one line, no newline); nil drops
	// them.
	Say func(string)

	tls      *handshakes        // WatchTLS
	follower *sentinel.Follower // FollowSentinels
}

// say passes a note to Say, if set.
func (t *Target) say(format string, args ...any) {
	if t.Say != nil {
		t.Say(fmt.Sprintf(format, args...))
	}
}

// BenchError is an error in redis-benchmark's own words (its exact text
// is part of the drop-in contract): the CLI prints it without its prefix.
type BenchError struct{ Err error }

func (e *BenchError) Error() string { return e.Err.Error() }
func (e *BenchError) Unwrap() error { return e.Err }

func benchErrorf(format string, args ...any) error {
	return &BenchError{Err: fmt.Errorf(format, args...)}
}

// Pool opens n connections with o. If none opens, it fails with one line;
// if some do not, it goes on with the rest (nil in their place: the open
// loop keeps retrying them) and says so.
func (t *Target) Pool(ctx context.Context, o conn.Options, n int) ([]*conn.Conn, error) {
	conns, failed, first := conn.DialSome(ctx, o, n)
	if failed == n {
		return nil, usage.Option("", "cannot connect to %s: %v", o.Addr, first) // first may name a setting
	}
	if failed > 0 {
		t.say("pacer: %d of %d connections to %s could not be opened (%v); going on with %d", failed, n, o.Addr, first, n-failed)
	}
	return conns, nil
}

// BenchPool opens n connections for a closed loop (the ones that open),
// failing in redis-benchmark's words when the server cannot be reached.
func (t *Target) BenchPool(ctx context.Context, o conn.Options, n int) ([]*conn.Conn, error) {
	all, failed, err := conn.DialSome(ctx, o, n)
	if failed < n {
		if failed > 0 {
			t.say("pacer: %d of %d connections to %s could not be opened (%v); going on with %d", failed, n, o.Addr, err, n-failed)
		}
		return opened(all), nil
	}
	if errors.Is(err, conn.ErrTLS) {
		return nil, benchErrorf("Could not connect to Redis at %s: %v", o.Addr, err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		msg := opErr.Err.Error()
		if se, ok := opErr.Err.(*os.SyscallError); ok {
			msg = se.Err.Error()
		}
		return nil, benchErrorf("Could not connect to Redis at %s: %s", o.Addr, capitalize(msg))
	}
	return nil, benchErrorf("Node %s replied with error: %v", o.Addr, err)
}

// Redial opens one more connection to the target (a replacement for one
// that died).
func (t *Target) Redial(ctx context.Context) (*conn.Conn, error) { return conn.Dial(ctx, t.Current()) }

// opened drops the connections that could not be opened (nil).
func opened(all []*conn.Conn) []*conn.Conn {
	out := all[:0]
	for _, c := range all {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// CloseAll closes the connections that were opened.
func CloseAll(all []*conn.Conn) {
	for _, c := range all {
		if c != nil {
			c.Close()
		}
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
