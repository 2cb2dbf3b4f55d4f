package text

import (
	"fmt"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// TLSLine describes a test's TLS handshakes in one line, empty over plain
// TCP:
//
//	TLS 1.3 TLS_AES_128_GCM_SHA256; 50 handshakes, ms: min 0.512 p50 0.734 p99 1.820 max 1.950 (in no latency above)
func TLSLine(t *report.Test) string {
	h := t.MustFacts().TLS
	if h == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(safetext.Escape(h.Version))
	if h.CipherSuite != "" {
		b.WriteString(" " + safetext.Escape(h.CipherSuite))
	}
	if h.Time == nil || h.Time.TotalCount() == 0 {
		b.WriteString("; no handshake")
		return b.String()
	}
	s := histo.Summarize(h.Time)
	fmt.Fprintf(&b, "; %d handshakes, ms: min %.3f p50 %.3f p99 %.3f max %.3f (in no latency above)",
		s.Count, s.Min, s.P50, s.P99, s.Max)
	return b.String()
}

func writeTLS(b *strings.Builder, t *report.Test) {
	if line := TLSLine(t); line != "" {
		fmt.Fprintf(b, "  tls            %s\n", line)
	}
}
