package peers

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
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
	// Cluster, against a Redis Cluster, holds each primary's
	// configuration, as redis-benchmark --cluster shows it.
	Cluster []NodeConfig
	// Percentiles, when not empty, replace p50, p95 and p99 in the
	// latency summary (--percentiles).
	Percentiles []float64
}

// NodeConfig is a cluster primary's save and appendonly, when CONFIG GET
// answered (HaveConfig).
type NodeConfig struct {
	HaveConfig       bool
	Save, AppendOnly string
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

func statsOf(t *report.Test) benchStats {
	f := t.MustFacts()
	h := f.Micros
	if h == nil {
		h = histo.NewRecorderGeometry(10, 3000000, 3).Snapshot()
	}
	finished := t.Counts.Completed + t.Counts.Errors
	secs := float32(f.Window.Seconds())
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

// benchPercentiles are the chosen percentiles of r's latency in
// milliseconds, computed as the others (the C library's rank, whole
// microseconds, float arithmetic).
func benchPercentiles(t *report.Test, ps []float64) []float64 {
	h := t.MustFacts().Micros
	if h == nil {
		h = histo.NewRecorderGeometry(10, 3000000, 3).Snapshot()
	}
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = ms(histo.CValueAtPercentile(h, p))
	}
	return out
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

// BenchCSVHeader writes the CSV header redis-benchmark prints once, with
// o.Percentiles in place of p50, p95 and p99 ("p99.9_latency_ms").
func BenchCSVHeader(w io.Writer, o report.TextOptions) error {
	if len(o.Percentiles) == 0 {
		_, err := io.WriteString(w, `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`+"\n")
		return err
	}
	var b strings.Builder
	b.WriteString(`"test","rps","avg_latency_ms","min_latency_ms"`)
	for _, p := range o.Percentiles {
		fmt.Fprintf(&b, `,"%s_latency_ms"`, report.PercentileLabel(p))
	}
	b.WriteString(`,"max_latency_ms"` + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// BenchCSV writes one CSV row, with o.Percentiles in place of p50, p95
// and p99.
func BenchCSV(w io.Writer, title string, r *report.Test, o report.TextOptions) error {
	s := statsOf(r)
	cols := []string{cfloat(2, s.rps), cfloat(3, s.avg), cfloat(3, s.min)}
	if len(o.Percentiles) == 0 {
		cols = append(cols, cfloat(3, s.p50), cfloat(3, s.p95), cfloat(3, s.p99))
	} else {
		for _, v := range benchPercentiles(r, o.Percentiles) {
			cols = append(cols, cfloat(3, v))
		}
	}
	cols = append(cols, cfloat(3, s.max))
	_, err := fmt.Fprintf(w, "\"%s\",\"%s\"\n", safetext.Escape(title), strings.Join(cols, `","`))
	return err
}

// BenchQuiet writes the -q line, with o.Percentiles in place of p50
// ("p50=0.111 msec p99=0.223 msec"); last is the length of the progress
// line printed before (0 for none).
func BenchQuiet(w io.Writer, title string, r *report.Test, last int, o report.TextOptions) error {
	s := statsOf(r)
	lat := "p50=" + cfloat(3, s.p50) + " msec"
	if len(o.Percentiles) > 0 {
		parts := make([]string, len(o.Percentiles))
		for i, v := range benchPercentiles(r, o.Percentiles) {
			parts[i] = report.PercentileLabel(o.Percentiles[i]) + "=" + cfloat(3, v) + " msec"
		}
		lat = strings.Join(parts, " ")
	}
	_, err := fmt.Fprintf(w, "%s%s: %s requests per second, %s\n", cleanLine(last), safetext.Escape(title), cfloat(2, s.rps), lat)
	return err
}

// BenchFull writes redis-benchmark's full report.
func BenchFull(w io.Writer, title string, r *report.Test, info BenchInfo, last int) error {
	s := statsOf(r)
	micros := r.MustFacts().Micros
	var b strings.Builder
	b.WriteString(cleanLine(last))
	fmt.Fprintf(&b, "====== %s ======\n", safetext.Escape(title))
	fmt.Fprintf(&b, "  %d requests completed in %s seconds\n", s.finished, cfloat(2, s.seconds))
	fmt.Fprintf(&b, "  %d parallel clients\n", info.Clients)
	fmt.Fprintf(&b, "  %d bytes payload\n", info.DataSize)
	fmt.Fprintf(&b, "  keep alive: %d\n", info.KeepAlive)
	if len(info.Cluster) > 0 {
		fmt.Fprintf(&b, "  cluster mode: yes (%d masters)\n", len(info.Cluster))
		for i, n := range info.Cluster {
			if !n.HaveConfig {
				continue
			}
			save := n.Save
			if save == "" {
				save = "NONE"
			}
			fmt.Fprintf(&b, "  node [%d] configuration:\n    save: %s\n    appendonly: %s\n", i, save, n.AppendOnly)
		}
	} else if info.HaveConfig {
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
	if micros != nil {
		for _, st := range histo.PercentileSteps(micros, 1) {
			fmt.Fprintf(&b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n", st.Percentile, ms(st.Value), st.Cumulative)
		}
		b.WriteString("\nCumulative distribution of latencies:\n")
		for _, st := range histo.LinearSteps(micros, 100, 2000, 1000) {
			fmt.Fprintf(&b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n", st.Percentile, ms(st.Value), st.Cumulative)
		}
	} else {
		b.WriteString("\nCumulative distribution of latencies:\n")
	}
	b.WriteString("\nSummary:\n")
	fmt.Fprintf(&b, "  throughput summary: %s requests per second\n", cfloat(2, s.rps))
	b.WriteString("  latency summary (msec):\n")
	if len(info.Percentiles) == 0 {
		fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n", "avg", "min", "p50", "p95", "p99", "max")
		fmt.Fprintf(&b, "    %9s %9s %9s %9s %9s %9s\n", cfloat(3, s.avg), cfloat(3, s.min), cfloat(3, s.p50),
			cfloat(3, s.p95), cfloat(3, s.p99), cfloat(3, s.max))
	} else {
		fmt.Fprintf(&b, "    %9s %9s", "avg", "min")
		for _, p := range info.Percentiles {
			fmt.Fprintf(&b, " %9s", report.PercentileLabel(p))
		}
		fmt.Fprintf(&b, " %9s\n", "max")
		fmt.Fprintf(&b, "    %9s %9s", cfloat(3, s.avg), cfloat(3, s.min))
		for _, v := range benchPercentiles(r, info.Percentiles) {
			fmt.Fprintf(&b, " %9s", cfloat(3, v))
		}
		fmt.Fprintf(&b, " %9s\n", cfloat(3, s.max))
	}
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

// BenchLine is redis-benchmark's -q line of a closed test read back
// (pacer report), without the blanking of a progress line before it.
func BenchLine(title string, t *report.Test) string {
	s := statsOf(t)
	return fmt.Sprintf("%s: %s requests per second, p50=%s msec\n", safetext.Escape(title), cfloat(2, s.rps), cfloat(3, s.p50))
}
