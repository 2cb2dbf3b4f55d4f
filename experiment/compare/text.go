package compare

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
)

// Write prints the side-by-side table of runs (the closed loop first) and
// the reading of the gap; ps, when not empty, choose the percentile rows.
func Write(w io.Writer, runs []Run, ps []float64) error {
	var b strings.Builder
	closed := runs[0].Test
	open := runs[1:]
	const first, col = 22, 13
	// Header: one column for the closed loop, two (service, response) per open run.
	fmt.Fprintf(&b, "%-*s%*s", first, "", col, "closed loop")
	for _, r := range open {
		h := fmt.Sprintf("open loop at %s/s", r.Test.Target())
		if r.Fraction > 0 {
			h += fmt.Sprintf(" (%.0f%%)", r.Fraction*100)
		}
		fmt.Fprintf(&b, "  %*s", 2*col, h)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*s", first, "latency (ms)", col, "from send")
	for range open {
		fmt.Fprintf(&b, "  %*s%*s", col, "service", col, "response")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*.0f", first, "throughput (req/s)", col, closed.Achieved())
	for _, r := range open {
		fmt.Fprintf(&b, "  %*.0f%*s", col, r.Test.Achieved(), col, "")
	}
	b.WriteString("\n")
	closedResp, _, _ := closed.LatencyHistograms()
	cs := histo.Summarize(closedResp)
	row := func(name string, pick func(histo.Summary) float64) {
		fmt.Fprintf(&b, "%-*s%*.3f", first, name, col, pick(cs))
		for _, r := range open {
			resp, serv, _ := r.Test.LatencyHistograms()
			fmt.Fprintf(&b, "  %*.3f%*.3f", col, pick(histo.Summarize(serv)), col, pick(histo.Summarize(resp)))
		}
		b.WriteString("\n")
	}
	if len(ps) > 0 {
		// The chosen percentiles: one row each, from the histograms.
		cv := report.PercentileMillis(closedResp, ps)
		sv, rv := make([][]float64, len(open)), make([][]float64, len(open))
		for j, r := range open {
			resp, serv, _ := r.Test.LatencyHistograms()
			sv[j], rv[j] = report.PercentileMillis(serv, ps), report.PercentileMillis(resp, ps)
		}
		for i, p := range ps {
			fmt.Fprintf(&b, "%-*s%*.3f", first, report.PercentileLabel(p), col, cv[i])
			for j := range open {
				fmt.Fprintf(&b, "  %*.3f%*.3f", col, sv[j][i], col, rv[j][i])
			}
			b.WriteString("\n")
		}
	} else {
		row("p50", func(s histo.Summary) float64 { return s.P50 })
		row("p90", func(s histo.Summary) float64 { return s.P90 })
		row("p99", func(s histo.Summary) float64 { return s.P99 })
		row("p99.9", func(s histo.Summary) float64 { return s.P999 })
	}
	row("max", func(s histo.Summary) float64 { return s.Max })
	// The server's side and the network: one value per run, in the
	// closed column and under each open run's service time.
	cells := func(name string, pick func(Run) string) {
		fmt.Fprintf(&b, "%-*s%*s", first, name, col, pick(runs[0]))
		for _, r := range open {
			fmt.Fprintf(&b, "  %*s%*s", col, pick(r), col, "")
		}
		b.WriteString("\n")
	}
	haveServer, haveBytes, haveTLS := false, false, ""
	for _, r := range runs {
		haveServer = haveServer || r.Test.Server != nil && r.Test.Server.Total().Calls > 0
		haveBytes = haveBytes || r.Test.BytesSent+r.Test.BytesReceived > 0
		if t := r.Test.Handshakes(); t != nil && haveTLS == "" {
			haveTLS = strings.TrimSpace(safetext.Escape(t.Version + " " + t.CipherSuite))
		}
	}
	if haveServer {
		cells("server per call (µs)", func(r Run) string {
			if t := r.Test.Server.Total(); t.Calls > 0 {
				return strconv.FormatFloat(t.UsecPerCall, 'f', 2, 64)
			}
			return "-"
		})
		cells("server p99 ≤ (µs)", func(r Run) string {
			if h := r.Test.Server.Total().LatencyHistogram; h != nil && h.Calls > 0 {
				return strconv.FormatUint(h.Percentile(99), 10)
			}
			return "-"
		})
	}
	if haveBytes {
		cells("network out", func(r Run) string { return bitsPerSecond(r.Test, r.Test.BytesSent) })
		cells("network in", func(r Run) string { return bitsPerSecond(r.Test, r.Test.BytesReceived) })
	}
	if haveTLS != "" {
		handshake := func(q float64) func(Run) string {
			return func(r Run) string {
				if t := r.Test.Handshakes(); t != nil && t.Time != nil && t.Time.TotalCount() > 0 {
					return strconv.FormatFloat(histo.Millis(t.Time.ValueAtPercentile(q)), 'f', 3, 64)
				}
				return "-"
			}
		}
		cells("tls handshake p50 (ms)", handshake(50))
		cells("tls handshake max (ms)", handshake(100))
	}
	fmt.Fprintf(&b, "%-*s%*d", first, "completed", col, closed.Counts.Completed)
	for _, r := range open {
		fmt.Fprintf(&b, "  %*d%*s", col, r.Test.Counts.Completed, col, "")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*d", first, "errors+timeouts+unsent", col, closed.Counts.Errors+closed.Counts.Timeouts+closed.Counts.Unsent)
	for _, r := range open {
		c := r.Test.Counts
		fmt.Fprintf(&b, "  %*d%*s", col, c.Errors+c.Timeouts+c.Unsent, col, "")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s%*s", first, "verdict", col, "-")
	for _, r := range open {
		fmt.Fprintf(&b, "  %*s%*s", col, safetext.Escape(r.Test.Verdict), col, "")
	}
	b.WriteString("\n")
	if haveServer {
		b.WriteString("server: INFO commandstats per call over each run (every client of the server); p99 ≤ is the bound of LATENCY HISTOGRAM's power-of-two bucket\n")
	}
	if haveBytes {
		b.WriteString("network: bytes written to and read from the sockets per second of each run, in bits (1 Mbit/s = 10^6 bit/s)\n")
	}
	if haveTLS != "" {
		fmt.Fprintf(&b, "tls: %s; each run's connections' handshakes, counted in no latency\n", haveTLS)
	}
	b.WriteString("\n")
	if len(open) > 0 {
		b.WriteString(Reading(runs[0], pickRun(open)) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pickRun chooses the open run the reading talks about: the fastest one
// the generator kept up with, else the first.
func pickRun(open []Run) Run {
	best := -1
	for i, r := range open {
		if r.Test.Verdict == report.VerdictOK && (best < 0 || r.Test.Target().PerSecond() > open[best].Test.Target().PerSecond()) {
			best = i
		}
	}
	if best < 0 {
		best = 0
	}
	return open[best]
}

// Comparable rates: above maxShare of the closed loop's throughput the
// open loop overloads the server, and its queueing is overload, not what
// the closed loop hides: no conclusion. Below minShare the two loops
// measure different loads: a far higher open-loop p99 still shows what
// the closed loop hides (a lighter load, more latency), but agreement
// means nothing.
const (
	minShare = 0.5
	maxShare = 1.05
)

// Reading is the one-sentence interpretation of the gap between the
// closed loop's p99 and an open loop's response p99. It states the rates
// compared and concludes only when both runs are trustworthy (verdict ok)
// and comparable (see minShare).
func Reading(closedRun, openRun Run) string {
	closed, open := closedRun.Test, openRun.Test
	cresp, _, _ := closed.LatencyHistograms()
	oresp, _, _ := open.LatencyHistograms()
	cp, op := histo.Summarize(cresp).P99, histo.Summarize(oresp).P99
	cr, or := closed.Achieved(), open.Target().PerSecond()
	share := 0.0
	if cr > 0 {
		share = or / cr
	}
	s := fmt.Sprintf("Closed loop at %.0f req/s (its own pace) against open loop at %s req/s (%.0f%% of it)", cr, open.Target(), 100*share)
	switch {
	case closed.Verdict != report.VerdictOK:
		return s + ": no conclusion, the closed run is inconclusive (" + safetext.Line(closed.Verdict+": "+closed.VerdictReason) + ")."
	case open.Verdict != report.VerdictOK:
		return s + ": no conclusion, the open run is inconclusive (" + safetext.Line(open.Verdict+": "+open.VerdictReason) + ")."
	case share > maxShare:
		return s + fmt.Sprintf(": no conclusion, the open loop offered more than the closed loop's throughput, so its response p99 (%.3f ms against %.3f ms) shows overload, not hidden queueing.", op, cp)
	case op > 2*cp && op-cp > 1:
		// A lighter load with a far higher p99: whatever the share.
		return s + fmt.Sprintf(": the closed-loop p99 (%.3f ms) hides %.1f ms of queueing, the open loop's response p99 is %.1f ms — coordinated omission.", cp, op-cp, op)
	case share < minShare:
		return s + fmt.Sprintf(": no conclusion, the loads are too far apart to compare (response p99 %.3f ms against the closed loop's %.3f ms); run the open loop nearer the closed loop's throughput (--rate).", op, cp)
	}
	return s + fmt.Sprintf(": response p99 %.3f ms against the closed loop's %.3f ms — no hidden queueing at this rate.", op, cp)
}

// bitsPerSecond is n bytes over t's window as a bit rate ("3.28 Gbit/s"),
// or "-".
func bitsPerSecond(t *report.Test, n uint64) string {
	if secs := t.Window().Seconds(); secs > 0 {
		return text.BitRate(float64(n) / secs)
	}
	return "-"
}

// FromDocument returns the runs of a document pacer compare wrote (a
// closed loop, then open loops), nil for any other document.
func FromDocument(d *report.Document) []Run {
	if d.Mode != "mixed" || len(d.Tests) < 2 || d.Tests[0].Mode != "closed" {
		return nil
	}
	var runs []Run
	for i := range d.Tests {
		t := &d.Tests[i]
		if (i == 0) != (t.Mode == "closed") {
			return nil
		}
		// Text from a file reaches the terminal escaped.
		e := *t
		e.Name, e.VerdictReason = safetext.Escape(t.Name), safetext.Escape(t.VerdictReason)
		runs = append(runs, Run{Label: e.Name, Test: &e})
	}
	// Without a rate the open loops ran at fixed fractions of the closed
	// loop's throughput: name them when the rates say so (roundRate keeps
	// three digits: within 1% of the fraction).
	if d.Config["rate"] == nil && len(runs)-1 <= len(Fractions) {
		closed := runs[0].Test.Achieved()
		for i, r := range runs[1:] {
			f := Fractions[i]
			if closed > 0 && math.Abs(r.Test.Target().PerSecond()/closed-f) < 0.01*f {
				runs[i+1].Fraction = f
			}
		}
	}
	return runs
}

// WriteDocument prints a compare document as pacer compare printed it:
// the heading, the table and the reading, the SLO lines, what went wrong
// and the seed.
func WriteDocument(w io.Writer, d *report.Document, runs []Run) error {
	num := func(k string) float64 {
		v, _ := d.Config[k].(float64)
		return v
	}
	title, _ := d.Config["test"].(string)
	where, _ := d.Config["target"].(string)
	if faults, ok := d.Config["embedded"].(string); ok {
		where = fmt.Sprintf("embedded target (%s)", faults)
	}
	title, where = safetext.Escape(title), safetext.Escape(where)
	dur := time.Duration(num("duration_s") * float64(time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "pacer compare: %s, %.0f connections, closed-loop pipeline %.0f, %s per run, %s\n",
		title, num("connections"), num("pipeline"), dur, where)
	if d.Server != nil && d.Server.Available {
		fmt.Fprintln(&b, text.ServerLine(d.Server))
	}
	b.WriteString("\n")
	if err := Write(&b, runs, nil); err != nil {
		return err
	}
	for _, t := range d.Tests {
		if t.SLO != nil {
			for _, l := range t.SLO.Lines() {
				fmt.Fprintf(&b, "%s: %s\n", safetext.Escape(t.Name), safetext.Escape(l))
			}
		}
		if t.Verdict == report.VerdictTargetLost {
			fmt.Fprintf(&b, "%s: target lost: %s\n", safetext.Escape(t.Name), safetext.Line(t.VerdictReason))
		}
	}
	if d.Interrupted {
		b.WriteString("(the run was interrupted: partial result)\n")
	}
	if seed := text.Seed(d); seed != "" {
		fmt.Fprintf(&b, "seed %s (--seed to repeat)\n", seed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
