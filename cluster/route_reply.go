package cluster

import (
	"time"
)

// What an error reply of a cluster node means for its request: where it
// goes next, whether the slot map must be fetched again, and how long to
// wait before a retry.

// Next is the way an error reply sends its request on.
type Next int

// The ways an error reply sends its request on.
const (
	// Answered: the reply is the request's answer (an error of its own).
	Answered Next = iota
	// Moved: the slot is another node's for good; resend there, the slot
	// map has changed.
	Moved
	// Ask: resend there once, preceded by ASKING (a slot being migrated).
	Ask
	// Retry: -CLUSTERDOWN or -TRYAGAIN; back off, then resend to the
	// slot's owner.
	Retry
	// Broken: a MOVED or ASK that cannot be followed; the request fails
	// with Reply.Err.
	Broken
)

// Reply is what a cluster error reply says (see Follow).
type Reply struct {
	Next     Next
	Redirect Redirect // Moved, Ask: where to
	Code     string   // Retry: the error's code (CLUSTERDOWN, TRYAGAIN)
	Err      error    // Broken: why it cannot be followed
}

// Follow reads an error reply of a cluster node: its text (without the
// leading '-') and code, its first word (conn.Reply.Code).
func Follow(text, code []byte) Reply {
	if red, ok := ParseRedirect(text); ok {
		if red.Ask {
			return Reply{Next: Ask, Redirect: red}
		}
		return Reply{Next: Moved, Redirect: red}
	}
	if err := BadRedirect(text); err != nil {
		// "-MOVED 1 :99999" names no node: the request fails with the
		// reason instead of a node joining and failing to dial.
		return Reply{Next: Broken, Err: err}
	}
	if Retryable(text) {
		return Reply{Next: Retry, Code: string(code)}
	}
	return Reply{}
}

// Refetch reports whether the slot map must be fetched again after a
// reply sent its request on next: a MOVED says the map changed, a
// -CLUSTERDOWN or -TRYAGAIN that it may be changing. An ASK moves one
// request only.
func Refetch(next Next) bool { return next == Moved || next == Retry }

// MinRefresh spaces the slot map refreshes: the redirects of the requests
// already in flight do not each ask again.
const MinRefresh = 100 * time.Millisecond

// Retry backoff after -CLUSTERDOWN or -TRYAGAIN: RetryBackoff, doubling per
// try, at most MaxRetryBackoff.
const (
	RetryBackoff    = 10 * time.Millisecond
	MaxRetryBackoff = 200 * time.Millisecond
)

// Backoff is how long a request waits before its resend after tries sends
// (1 or more) that each met -CLUSTERDOWN or -TRYAGAIN.
func Backoff(tries int) time.Duration {
	if tries > 16 {
		return MaxRetryBackoff
	}
	return min(RetryBackoff<<max(tries-1, 0), MaxRetryBackoff)
}
