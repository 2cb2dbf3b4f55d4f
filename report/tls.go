package report

import (
	"fmt"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// TLS is a test's TLS handshakes in the JSON: those of the connections it
// opened (the first pool and every reconnection), kept out of every
// latency. Absent over plain TCP.
type TLS struct {
	// Version and CipherSuite are what was negotiated ("TLS 1.3",
	// "TLS_AES_128_GCM_SHA256"); the distinct values joined with ", " when
	// connections differed.
	Version     string `json:"version"`
	CipherSuite string `json:"cipher_suite"`
	// Handshakes counts them; HandshakeMs summarizes their durations, and
	// Histogram holds them (base64 HdrHistogram V2, ns) so that results
	// merge exactly.
	Handshakes  int64          `json:"handshakes"`
	HandshakeMs *histo.Summary `json:"handshake_ms"`
	Histogram   string         `json:"histogram"`
}

// tlsJSON converts a result's handshakes (nil stays nil).
func tlsJSON(h *scheduler.TLSHandshakes) (*TLS, error) {
	if h == nil {
		return nil, nil
	}
	t := &TLS{Version: h.Version, CipherSuite: h.CipherSuite}
	if h.Time != nil {
		s := histo.Summarize(h.Time)
		t.Handshakes, t.HandshakeMs = h.Time.TotalCount(), &s
		var err error
		if t.Histogram, err = histo.Encode(h.Time); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// result rebuilds the handshakes a TLS was made from.
func (t *TLS) result() (*scheduler.TLSHandshakes, error) {
	if t == nil {
		return nil, nil
	}
	h := &scheduler.TLSHandshakes{Version: t.Version, CipherSuite: t.CipherSuite}
	if t.Histogram != "" {
		var err error
		if h.Time, err = DecodeHistogram(t.Histogram); err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
	}
	return h, nil
}
