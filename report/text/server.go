package text

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/serverinfo"
)

// What the server said about itself and about each test (package
// serverinfo), and what went over the network, in words. Every text that
// came from the server is escaped.

// ServerLine is the one-line identity printed before a run:
//
//	server: redis 7.0.15 (standalone); save "3600 1 300 100 60 10000", appendonly no, io-threads 1, maxmemory-policy noeviction; 1000 keys
func ServerLine(id *serverinfo.Identity) string {
	if id == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("server: ")
	if !id.Available {
		b.WriteString("unknown")
	} else {
		b.WriteString(safetext.Escape(id.Name))
		if id.Version != "" {
			b.WriteString(" " + safetext.Escape(id.Version))
		}
		if id.Name != "redis" && id.RedisVersion != "" && id.RedisVersion != id.Version {
			b.WriteString(" (redis_version " + safetext.Escape(id.RedisVersion) + ")")
		}
		if id.Mode != "" {
			b.WriteString(" (" + safetext.Escape(id.Mode) + ")")
		}
		if id.ThreadCount != "" {
			b.WriteString(", " + safetext.Escape(id.ThreadCount) + " threads")
		}
	}
	var settings []string
	for _, name := range serverinfo.ConfigNames {
		if v, ok := id.Config[name]; ok {
			if name == "save" {
				v = strconv.Quote(v)
			}
			settings = append(settings, name+" "+safetext.Escape(v))
		}
	}
	if len(settings) > 0 {
		b.WriteString("; " + strings.Join(settings, ", "))
	}
	if id.Keys != nil {
		fmt.Fprintf(&b, "; %d keys", *id.Keys)
	}
	if id.Error != "" {
		b.WriteString(" (" + safetext.Escape(id.Error) + ")")
	}
	return b.String()
}

// maxServerRows bounds the commands the text lists per test.
const maxServerRows = 8

// writeServer prints, under a test, the server's time per call for each
// command it executed during the test, and where the mean response time
// went: send lag, the server's time, and the rest (network, client, and
// waiting in the server behind other commands).
func writeServer(b *strings.Builder, t *report.Test, s *serverinfo.Stats) {
	if s == nil {
		return
	}
	if !s.Available {
		fmt.Fprintf(b, "  server side    not available: %s\n", safetext.Escape(s.Error))
		return
	}
	b.WriteString("  server side    (INFO commandstats and LATENCY HISTOGRAM over the test, every client of the server)\n")
	names := s.Sorted()
	if len(names) == 0 {
		b.WriteString("  the server counted no commands\n")
	} else {
		fmt.Fprintf(b, "  %-14s %10s %10s %10s %10s\n", "command", "calls", "per call", "p50 ≤", "p99 ≤")
		for i, name := range names {
			if i == maxServerRows {
				fmt.Fprintf(b, "  … and %d more commands (see the JSON)\n", len(names)-i)
				break
			}
			c := s.Commands[name]
			fmt.Fprintf(b, "  %-14s %10d %10s %10s %10s\n", safetext.Escape(name), c.Calls, usecText(c.UsecPerCall),
				bucketText(c.LatencyHistogram, 50), bucketText(c.LatencyHistogram, 99))
		}
	}
	if s.Error != "" {
		fmt.Fprintf(b, "  note           %s\n", safetext.Escape(s.Error))
	}
	if c := s.CPU; c != nil {
		fmt.Fprintf(b, "  server CPU     %.3f s user + %.3f s system (INFO cpu, every thread)\n", c.UserS, c.SysS)
	}
	if n := len(s.LatencyEvents); n > 0 {
		w, _ := s.Worst()
		fmt.Fprintf(b, "  server events  %d from its latency monitor (LATENCY HISTORY), the longest %s\n", n, safetext.Escape(w.String()))
	}
	total := s.Total()
	if total.Calls == 0 {
		return
	}
	if sent := t.Counts.Sent; sent > 0 && math.Abs(float64(total.Calls)-float64(sent)) > 0.1*float64(sent) {
		fmt.Fprintf(b, "  note           the server counted %d calls, pacer sent %d: other clients were busy too, or the server counts these commands differently\n",
			total.Calls, sent)
	}
	f := t.MustFacts()
	resp, serv, lag := histo.Summarize(f.Response), histo.Summarize(f.Service), histo.Summarize(f.Lag)
	if resp.Count == 0 || serv.Count == 0 {
		return
	}
	// Means in ms; the server's in µs.
	server := total.UsecPerCall
	rest := serv.Mean*1000 - server
	split := fmt.Sprintf("mean response %s = send lag %s + service %s; service = server %s + network, client and server queue %s",
		usecText(resp.Mean*1000), usecText(lag.Mean*1000), usecText(serv.Mean*1000), usecText(server), usecText(rest))
	if lag.Count == 0 {
		split = fmt.Sprintf("mean response %s = server %s + network, client and server queue %s",
			usecText(resp.Mean*1000), usecText(server), usecText(resp.Mean*1000-server))
	}
	fmt.Fprintf(b, "  time split     %s\n", split)
}

// ServerBrief is the server's side of a test in one line, for outputs
// with no room for a table (bench, fill):
//
//	server side: get 20000 calls, 0.08 µs/call, p50 ≤ 1 µs, p99 ≤ 2 µs
func ServerBrief(s *serverinfo.Stats) string {
	if s == nil {
		return ""
	}
	if !s.Available {
		return "server side: not available (" + safetext.Escape(s.Error) + ")"
	}
	names := s.Sorted()
	if len(names) == 0 {
		return "server side: no commands counted"
	}
	var parts []string
	for i, name := range names {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(names)-i))
			break
		}
		c := s.Commands[name]
		p := fmt.Sprintf("%s %d calls, %s/call", safetext.Escape(name), c.Calls, usecText(c.UsecPerCall))
		if h := c.LatencyHistogram; h != nil {
			p += fmt.Sprintf(", p50 ≤ %s, p99 ≤ %s", bucketText(h, 50), bucketText(h, 99))
		}
		parts = append(parts, p)
	}
	line := "server side: " + strings.Join(parts, "; ")
	if s.Keys != nil {
		line += fmt.Sprintf("; %d keys after", *s.Keys)
	}
	return line
}

// bucketText is the bound of the bucket holding percentile p, or "-".
func bucketText(h *serverinfo.Histogram, p float64) string {
	if h == nil || h.Calls == 0 {
		return "-"
	}
	if b := h.Percentile(p); b < 1000 {
		return strconv.FormatUint(b, 10) + " µs"
	}
	return usecText(float64(h.Percentile(p)))
}

// usecText formats microseconds in the unit that reads best: 0.08 µs,
// 512.3 µs, 50.20 ms, 1.20 s.
func usecText(us float64) string {
	a := math.Abs(us)
	switch {
	case a < 10:
		return strconv.FormatFloat(us, 'f', 2, 64) + " µs"
	case a < 1000:
		return strconv.FormatFloat(us, 'f', 1, 64) + " µs"
	case a < 1e6:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 2, 64) + " s"
}

// writeNetwork prints the bytes per second that went out and came in, in
// bytes and in bits (links are sold in bits: 4 KB values at 100k req/s
// are 3.28 Gbit/s, more than a 1 Gbit/s link carries).
func writeNetwork(b *strings.Builder, t *report.Test) {
	if line := networkLine(t); line != "" {
		fmt.Fprintf(b, "  network        %s\n", line)
	}
}

// networkLine says what went over the network per second of the test's
// window, and per request:
//
//	out 409.60 MB/s (3.28 Gbit/s), in 1.10 MB/s (8.80 Mbit/s); per request 4.10 kB out, 11 B in — more than a 1 Gbit/s link carries
//
// It is empty when nothing was counted.
func networkLine(r *report.Test) string {
	secs := r.MustFacts().Window.Seconds()
	if r.BytesSent+r.BytesReceived == 0 || secs <= 0 {
		return ""
	}
	out, in := float64(r.BytesSent)/secs, float64(r.BytesReceived)/secs
	line := fmt.Sprintf("out %s (%s), in %s (%s)", byteRate(out), BitRate(out), byteRate(in), BitRate(in))
	var per []string
	if n := r.Counts.Sent; n > 0 {
		per = append(per, byteSize(float64(r.BytesSent)/float64(n))+" out")
	}
	if n := r.Counts.Completed + r.Counts.Errors; n > 0 {
		per = append(per, byteSize(float64(r.BytesReceived)/float64(n))+" in")
	}
	if len(per) > 0 {
		line += "; per request " + strings.Join(per, ", ")
	}
	if 8*max(out, in) > 1e9 {
		line += " — more than a 1 Gbit/s link carries"
	}
	return line
}

// byteRate formats bytes per second with decimal prefixes (network
// units: 1 MB/s = 10^6 bytes per second).
func byteRate(v float64) string { return scaled(v, "B/s", "kB/s", "MB/s", "GB/s", "TB/s") }

// BitRate formats bytes per second as bits per second with decimal
// prefixes: 4.1e8 is "3.28 Gbit/s".
func BitRate(v float64) string {
	return scaled(8*v, "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s")
}

// byteSize formats a size in bytes with decimal prefixes.
func byteSize(v float64) string { return scaled(v, "B", "kB", "MB", "GB", "TB") }

// scaled formats v with the largest decimal prefix that keeps it at or
// above 1: whole numbers below 1000 of the base unit, two decimals above.
func scaled(v float64, units ...string) string {
	if v < 1000 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + " " + units[0]
	}
	k := 0
	for v >= 1000 && k < len(units)-1 {
		v /= 1000
		k++
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + units[k]
}
