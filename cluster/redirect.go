package cluster

import (
	"bytes"
	"net"
	"strconv"
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
// '-'); ok is false for any other error.
func ParseRedirect(text []byte) (r Redirect, ok bool) {
	switch {
	case bytes.HasPrefix(text, []byte("MOVED ")):
		text = text[len("MOVED "):]
	case bytes.HasPrefix(text, []byte("ASK ")):
		r.Ask = true
		text = text[len("ASK "):]
	default:
		return Redirect{}, false
	}
	num, addr, found := bytes.Cut(text, []byte(" "))
	if !found || len(addr) == 0 || bytes.IndexByte(addr, ' ') >= 0 {
		return Redirect{}, false
	}
	n, err := strconv.ParseUint(string(num), 10, 16)
	if err != nil || n >= Slots {
		return Redirect{}, false
	}
	r.Slot = uint16(n)
	// Redis 7 may announce an unknown endpoint as ":port", meaning the
	// host the client already talks to: Addr keeps it as sent (see
	// Target).
	r.Addr = string(addr)
	return r, true
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
