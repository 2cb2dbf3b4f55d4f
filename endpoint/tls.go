package endpoint

import (
	"crypto/tls"
	"slices"
	"strings"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// handshakes gathers the TLS handshakes of the target's connections, for
// each test in turn (TakeHandshakes).
type handshakes struct {
	mu       sync.Mutex
	h        *hdrhistogram.Histogram
	versions []string
	suites   []string
}

// WatchTLS makes every TLS connection dialed with t.Options record its
// handshake, for TakeHandshakes; over plain TCP it does nothing.
func (t *Target) WatchTLS() {
	if t.Options.TLS == nil {
		return
	}
	t.tls = &handshakes{}
	t.Options.OnTLSHandshake = t.tls.record
}

func (hs *handshakes) record(i conn.TLSInfo) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.h == nil {
		hs.h = histo.New()
	}
	_ = hs.h.RecordValue(max(int64(i.Handshake), histo.Lowest)) // beyond an hour: not a handshake
	if v := tls.VersionName(i.Version); !slices.Contains(hs.versions, v) {
		hs.versions = append(hs.versions, v)
	}
	if s := tls.CipherSuiteName(i.CipherSuite); !slices.Contains(hs.suites, s) {
		hs.suites = append(hs.suites, s)
	}
}

// TakeHandshakes returns the TLS handshakes recorded since the last take
// (nil over plain TCP, or without WatchTLS), and starts over: take once
// before a test's connections are dialed and once after it.
func (t *Target) TakeHandshakes() *scheduler.TLSHandshakes {
	hs := t.tls
	if hs == nil {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	out := &scheduler.TLSHandshakes{Version: strings.Join(hs.versions, ", "), CipherSuite: strings.Join(hs.suites, ", "), Time: hs.h}
	if out.Time == nil {
		out.Time = histo.New()
	}
	hs.h, hs.versions, hs.suites = nil, nil, nil
	return out
}
