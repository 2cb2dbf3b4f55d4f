package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
)

// This file prints closed-loop results in redis-benchmark 7's formats, byte
// for byte: the same printf formats and the same single-precision float
// arithmetic, over a histogram recorded the way redis-benchmark records
// (whole microseconds, 10 µs to 3 s) and walked with the C library's
// iterators (histo.PercentileSteps, histo.LinearSteps). Titles are
// escaped (safetext.Escape, the identity on printable text): a custom
// command's title is the user's template.

// BenchInfo is what the full report's header shows besides the result.
type BenchInfo struct {
	Clients   int
	DataSize  int
	KeepAlive int
	// HaveConfig is set when CONFIG GET answered; Save and AppendOnly are
	// its values.
	HaveConfig       bool
	Save, AppendOnly string
	Threads          int
}

// ms converts whole microseconds to milliseconds as redis-benchmark does:
// int64 / 1000.0f, in float.
func ms(us int64) float64 { return float64(float32(us) / 1000) }

// benchStats are the summary numbers of redis-benchmark's report.
type benchStats struct {
	rps, avg, min, p50, p95, p99, max float64
	finished                          uint64
	seconds                           float64
}

func statsOf(r *scheduler.Result) benchStats {
	h := r.Micros
	if h == nil {
		h = histo.NewRecorderGeometry(10, 3000000, 3).Snapshot()
	}
	finished := r.Counts.Completed + r.Counts.Errors
	secs := float32(r.Window.Seconds())
	s := benchStats{
		rps:      float64(float32(finished) / secs),
		avg:      float64(float32(histo.CMean(h) / 1000)),
		min:      ms(histo.CMin(h)),
		p50:      ms(histo.CValueAtPercentile(h, 50)),
		p95:      ms(histo.CValueAtPercentile(h, 95)),
		p99:      ms(histo.CValueAtPercentile(h, 99)),
		max:      ms(histo.CMax(h)),
		finished: finished,
		seconds:  float64(secs),
	}
	return s
}

// cfloat formats like C's printf("%.Nf"), which writes nan and inf in
// lower case with a sign.
func cfloat(prec int, v float64) string {
	switch {
	case math.IsNaN(v):
		return "-nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// cleanLine is redis-benchmark's printf("%*s\r", last, " "): it blanks a
// progress line of last bytes (one space when nothing was printed).
func cleanLine(last int) string {
	return fmt.Sprintf("%*s\r", max(last, 1), " ")
}

// BenchCSVHeader writes the CSV header redis-benchmark prints once.
func BenchCSVHeader(w io.Writer) error {
	_, err := io.WriteString(w, `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`+"\n")
	return err
}

// BenchCSV writes one CSV row.
func BenchCSV(w io.Writer, title string, r *scheduler.Result) error {
	s := statsOf(r)
	_, err := fmt.Fprintf(w, "\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"\n", safetext.Escape(title),
		cfloat(2, s.rps), cfloat(3, s.avg), cfloat(3, s.min), cfloat(3, s.p50), cfloat(3, s.p95), cfloat(3, s.p99), cfloat(3, s.max))
	return err
}

// BenchQuiet writes the -q line; last is the length of the progress line
// printed before (0 for none).
func BenchQuiet(w io.Writer, title string, r *scheduler.Result, last int) error {
	s := statsOf(r)
	_, err := fmt.Fprintf(w, "%s%s: %s requests per second, p50=%s msec\n", cleanLine(last), safetext.Escape(title), cfloat(2, s.rps), cfloat(3, s.p50))
	return err
}

// BenchFull writes redis-benchmark's full report.
func BenchFull(w io.Writer, title string, r *scheduler.Result, info BenchInfo, last int) error {
	s := statsOf(r)
	var b strings.Builder
	b.WriteString(cleanLine(last))
	fmt.Fprintf(&b, "====== %s ======\n", safetext.Escape(title))
	fmt.Fprintf(&b, "  %d requests completed in %s seconds\n", s.finished, cfloat(2, s.seconds))
	fmt.Fprintf(&b, "  %d parallel clients\n", info.Clients)
	fmt.Fprintf(&b, "  %d bytes payload\n", info.DataSize)
	fmt.Fprintf(&b, "  keep alive: %d\n", info.KeepAlive)
	if info.HaveConfig {
		fmt.Fprintf(&b, "  host configuration \"save\": %s\n", info.Save)
		fmt.Fprintf(&b, "  host configuration \"appendonly\": %s\n", info.AppendOnly)
	}
	if info.Threads > 0 {
		b.WriteString("  multi-thread: yes\n")
		fmt.Fprintf(&b, "  threads: %d\n", info.Threads)
	} else {
		b.WriteString("  multi-thread: no\n")
	}
	b.WriteString("\nLatency by percentile distribution:\n")
	if r.Micros != nil {
		for _, st := range histo.PercentileSteps(r.Micros, 1) {
			fmt.Fprintf(&b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n", st.Percentile, ms(st.Value), st.Cumulative)
		}
		b.WriteString("\nCumulative distribution of latencies:\n")
		for _, st := range histo.LinearSteps(r.Micros, 100, 2000, 1000) {
			fmt.Fprintf(&b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n", st.Percentile, ms(st.Value), st.Cumulative)
		}
	} else {
		b.WriteString("\nCumulative distribution of latencies:\n")
	}
	b.WriteString("\nSummary:\n")
	fmt.Fprintf(&b, "  throughput summary: %s requests per second\n", cfloat(2, s.rps))
	b.WriteString("  latency summary (msec):\n")
	fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n", "avg", "min", "p50", "p95", "p99", "max")
	fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n", cfloat(3, s.avg), cfloat(3, s.min), cfloat(3, s.p50),
		cfloat(3, s.p95), cfloat(3, s.p99), cfloat(3, s.max))
	_, err := io.WriteString(w, b.String())
	return err
}

// BenchProgress writes redis-benchmark's progress line (ending in \r, no
// newline) after blanking the previous one, and returns its length.
func BenchProgress(w io.Writer, title string, instRPS, rps, instAvgMs, avgMs float64, last int) (int, error) {
	line := fmt.Sprintf("%s: rps=%s (overall: %s) avg_msec=%s (overall: %s)\r", safetext.Escape(title),
		cfloat(1, float64(float32(instRPS))), cfloat(1, float64(float32(rps))),
		cfloat(3, float64(float32(instAvgMs))), cfloat(3, float64(float32(avgMs))))
	_, err := io.WriteString(w, cleanLine(last)+line)
	return len(line), err
}

// BenchCommands writes, after redis-benchmark's report of a mix, each
// command's share and latency (pacer's addition; redis-benchmark has no
// mixes). quiet prints one indented line per command.
func BenchCommands(w io.Writer, r *scheduler.Result, quiet bool) error {
	if len(r.Commands) == 0 {
		return nil
	}
	var b strings.Builder
	var total uint64
	for _, c := range r.Commands {
		total += c.Counts.Completed + c.Counts.Errors
	}
	if !quiet {
		b.WriteString("Per command:\n")
	}
	for _, c := range r.Commands {
		s := histo.Summarize(c.Response)
		n := c.Counts.Completed + c.Counts.Errors
		share := 0.0
		if total > 0 {
			share = 100 * float64(n) / float64(total)
		}
		fmt.Fprintf(&b, "  %s: %.2f%% of requests (%d), errors %d, p50=%s msec, p99=%s msec, max=%s msec\n",
			safetext.Escape(c.Name), share, n, c.Counts.Errors, millis(s, s.P50), millis(s, s.P99), millis(s, s.Max))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
