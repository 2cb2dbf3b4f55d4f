package text

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
)

// writeReplication writes a test's visibility lag and WAIT sections.
//
//	visibility lag (100 probes/s written on the primary at their intended instants)
//	  replica                 seen    lost       p50       p90       p99     p99.9       max
//	  127.0.0.1:6380          3000       0     0.412     0.601     1.201     3.004     5.102
//	  probe writes            3000, 0 failed; response p50 0.210 ms, p99 0.901 ms
//	WAIT 1 100 after every write: 30000 sent, 29990 acked, 10 short, 0 errors, 0 lost
//	  latency from the write's intended time (ms)   p50 0.5  …
func writeReplication(b *strings.Builder, t *report.Test) {
	if v := t.Visibility; v != nil {
		fmt.Fprintf(b, "  visibility lag (%s probes/s written on the primary at their intended instants; a probe's lag is its first sighting on a replica less that instant)\n",
			strconv.FormatFloat(v.Rate, 'f', -1, 64))
		fmt.Fprintf(b, "  %-21s %8s %7s %9s %9s %9s %9s %9s\n", "replica (ms)", "seen", "lost", "p50", "p90", "p99", "p99.9", "max")
		for _, r := range v.Replicas {
			s := summaryOf(r.VisibilityMs)
			fmt.Fprintf(b, "  %-21s %8d %7d %9s %9s %9s %9s %9s\n", safetext.Escape(r.Addr), r.Seen, r.Lost,
				millis(s, s.P50), millis(s, s.P90), millis(s, s.P99), millis(s, s.P999), millis(s, s.Max))
			if r.LastError != "" {
				fmt.Fprintf(b, "  %-21s last error: %s\n", "", safetext.Escape(r.LastError))
			}
		}
		w := summaryOf(v.WriteMs)
		fmt.Fprintf(b, "  %-21s %d written, %d failed; response p50 %s ms, p99 %s ms\n", "probe writes", v.Probes-min(v.Probes, v.WriteErrors), v.WriteErrors,
			millis(w, w.P50), millis(w, w.P99))
	}
	if w := t.Wait; w != nil {
		timeout := "0"
		if w.TimeoutMs > 0 {
			timeout = strconv.FormatFloat(w.TimeoutMs, 'f', -1, 64)
		}
		if w.Sent == 0 && w.Skipped == 0 {
			fmt.Fprintf(b, "  WAIT %d %s after every write: the test sent no write\n", w.Replicas, timeout)
			return
		}
		fmt.Fprintf(b, "  WAIT %d %s after every write: %d sent, %d acked, %d short of %d replicas, %d errors, %d lost, %d writes without one\n",
			w.Replicas, timeout, w.Sent, w.Acked, w.Short, w.Replicas, w.Errors, w.Lost, w.Skipped)
		s := summaryOf(w.LatencyMs)
		fmt.Fprintf(b, "  %-21s p50 %s, p90 %s, p99 %s, p99.9 %s, max %s ms (from the write's intended time)\n", "WAIT latency",
			millis(s, s.P50), millis(s, s.P90), millis(s, s.P99), millis(s, s.P999), millis(s, s.Max))
	}
}

// summaryOf is a JSON summary as the text prints it (none: no samples).
func summaryOf(s *histo.Summary) histo.Summary {
	if s == nil {
		return histo.Summary{}
	}
	out := *s
	out.Count = 1 // the JSON keeps no count; a summary is written only with samples
	return out
}
