package scheduler

import (
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// TLSHandshakes are the TLS handshakes of a test's connections: the pool
// it started with and every reconnection. Their time is part of no
// request's latency (requests go out on open connections only). The
// drivers do not dial their first pool, so whoever dialed fills Result.TLS.
type TLSHandshakes struct {
	// Version and CipherSuite are what the connections negotiated
	// ("TLS 1.3", "TLS_AES_128_GCM_SHA256"); the distinct values joined
	// with ", " when they differed.
	Version, CipherSuite string
	// Time holds each handshake's duration in ns.
	Time *hdrhistogram.Histogram
}

// Merge adds o's handshakes to t's.
func (t *TLSHandshakes) Merge(o *TLSHandshakes) {
	if o == nil {
		return
	}
	t.Version, t.CipherSuite = joinDistinct(t.Version, o.Version), joinDistinct(t.CipherSuite, o.CipherSuite)
	t.Time, _ = histo.Add(t.Time, o.Time)
}

// joinDistinct joins the ", "-separated values of a and b, each once, in
// order.
func joinDistinct(a, b string) string {
	var out []string
	for _, s := range []string{a, b} {
		for _, v := range strings.Split(s, ", ") {
			if v != "" && !contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return strings.Join(out, ", ")
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
