package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/pacer-load/pacer/conn"
)

// Redirect is a -MOVED or -ASK error reply: the slot's requests go to Addr,
// for good (MOVED) or for this one request, preceded by ASKING (ASK).
type Redirect struct {
	Ask  bool
	Slot uint16
	Addr string
}

// ParseRedirect reads "MOVED 3999 127.0.0.1:6381" or
// "ASK 3999 127.0.0.1:6381" (an error reply's text without the leading
// '-'); ok is false for any other error, and for a MOVED or ASK that is
// malformed (see BadRedirect).
func ParseRedirect(text []byte) (r Redirect, ok bool) {
	r, redirect, err := parseRedirect(text)
	return r, redirect && err == nil
}

// BadRedirect returns a protocol error (wrapping conn.ErrProtocol) naming
// the reply when text is a MOVED or ASK that cannot be followed: no slot,
// a slot past 16383, no address, or a port that is not a number in
// 1–65535 ("MOVED 1 :99999"). It returns nil for a good redirect and for
// any other error reply.
func BadRedirect(text []byte) error {
	_, redirect, err := parseRedirect(text)
	if !redirect || err == nil {
		return nil
	}
	return fmt.Errorf("%w: -%s: %v", conn.ErrProtocol, safeReply(text), err)
}

// safeReply cuts a reply's text for an error message: a hostile server
// may send megabytes.
func safeReply(text []byte) string {
	const limit = 128
	if len(text) > limit {
		return string(text[:limit]) + "…"
	}
	return string(text)
}

func parseRedirect(text []byte) (r Redirect, redirect bool, err error) {
	switch {
	case bytes.HasPrefix(text, []byte("MOVED ")):
		text = text[len("MOVED "):]
	case bytes.HasPrefix(text, []byte("ASK ")):
		r.Ask = true
		text = text[len("ASK "):]
	default:
		return Redirect{}, false, nil
	}
	num, addr, found := bytes.Cut(text, []byte(" "))
	if !found || len(addr) == 0 || bytes.IndexByte(addr, ' ') >= 0 {
		return Redirect{}, true, errors.New("not a slot and one address")
	}
	n, err := strconv.ParseUint(string(num), 10, 16)
	if err != nil || n >= Slots {
		return Redirect{}, true, fmt.Errorf("slot %q is not in 0-%d", num, Slots-1)
	}
	if err := checkPort(addr); err != nil {
		return Redirect{}, true, err
	}
	r.Slot = uint16(n)
	// Redis 7 may announce an unknown endpoint as ":port", meaning the
	// host the client already talks to: Addr keeps it as sent (see
	// Target).
	r.Addr = string(addr)
	return r, true, nil
}

// checkPort checks the port of a redirect's host:port: without one, the
// address would be dialled and fail, or reach a port nobody named.
func checkPort(addr []byte) error {
	i := bytes.LastIndexByte(addr, ':')
	if i < 0 {
		return fmt.Errorf("address %q has no port", addr)
	}
	if !validPort(string(addr[i+1:])) {
		return fmt.Errorf("port %q is not in 1-65535", addr[i+1:])
	}
	return nil
}

// validPort reports whether s is a decimal port in 1–65535.
func validPort(s string) bool {
	if len(s) == 0 || len(s) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n >= 1 && n <= 65535
}

// Target is the address the redirect sends to, given from, the address of
// the node that sent it: Addr, or, when Addr names no host (Redis 7's
// ":port" for an endpoint it does not know, or "?:port"), that port on
// from's host. Dialled as it stands, ":port" would reach the local machine,
// not the node's.
func (r Redirect) Target(from string) string {
	host, port, err := net.SplitHostPort(r.Addr)
	if err != nil || host != "" && host != "?" {
		return r.Addr
	}
	fromHost, _, err := net.SplitHostPort(from)
	if err != nil {
		return r.Addr
	}
	return net.JoinHostPort(fromHost, port)
}

// Retryable reports CLUSTERDOWN and TRYAGAIN errors: the request may
// succeed later (back off, refresh the topology, resend).
func Retryable(text []byte) bool {
	return bytes.HasPrefix(text, []byte("CLUSTERDOWN")) || bytes.HasPrefix(text, []byte("TRYAGAIN"))
}
