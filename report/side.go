package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scheduler"
)

// This file reads saved result documents back (pacer report): one
// document re-rendered as its run printed it, several side by side.

// Input is one saved result document and the label it goes by in reports
// (the file's name).
type Input struct {
	Label string
	Doc   *Document
	// Format is what the input was read from: FormatPacer (a pacer
	// result document), FormatRedisBenchmarkCSV or FormatMemtierJSON.
	Format string
	// Lacks lists, for another tool's result, the figures its format does
	// not carry ("p99.9", "counts", "histograms", …).
	Lacks []string
	// config holds the config object's values as their JSON text, so a
	// seed above 2^53 shows every digit.
	config map[string]json.RawMessage
}

// ReadInput reads a pacer.result/v1 document from data, checks that its
// histograms decode, bounds what it holds (see checkDocument), and labels
// it.
//
// Results of other tools (redis-benchmark --csv, memtier_benchmark
// --json-out-file) are read too, as closed-loop tests with the figures
// they have (see foreign.go).
func ReadInput(label string, data []byte) (Input, error) {
	if in, ok, err := readForeign(label, data); ok {
		return in, err
	}
	// One pass: the document, with its config object also kept as its
	// JSON text (a seed above 2^53 keeps every digit).
	var raw struct {
		*Document
		Config json.RawMessage `json:"config"`
	}
	raw.Document = &Document{}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Input{}, fmt.Errorf("not a pacer result: %w", err)
	}
	d := raw.Document
	if d.Schema != Schema {
		return Input{}, fmt.Errorf("not a pacer result: schema %q, want %q", d.Schema, Schema)
	}
	in := Input{Label: label, Doc: d}
	if len(raw.Config) > 0 && string(raw.Config) != "null" {
		if err := json.Unmarshal(raw.Config, &d.Config); err != nil {
			return Input{}, fmt.Errorf("not a pacer result: config: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw.Config))
		dec.UseNumber()
		if err := dec.Decode(&in.config); err != nil {
			return Input{}, fmt.Errorf("not a pacer result: config: %w", err)
		}
	}
	if err := checkDocument(d); err != nil {
		return Input{}, err
	}
	for i := range d.Tests {
		if _, err := d.Tests[i].figures(); err != nil {
			return Input{}, fmt.Errorf("test %d: %w", i+1, err)
		}
	}
	return in, nil
}

// ConfigItem is one setting of a document's config object: its key and
// its value as JSON text.
type ConfigItem struct{ Key, Value string }

// Config lists the document's settings, sorted by key.
func (in Input) Config() []ConfigItem {
	out := make([]ConfigItem, 0, len(in.config))
	for k, v := range in.config {
		val := string(v)
		var s string
		if json.Unmarshal(v, &s) == nil {
			val = s
		}
		out = append(out, ConfigItem{Key: cutText(k), Value: cutText(val)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// key is what matches a test across documents: its id (documents written
// before ids existed have none), else its name, without the rate of a compare document's open
// loop (runs at 50%, 80% and 95% of two closed loops match in order).
func (in Input) key(i int) string {
	if id := in.Doc.Tests[i].ID; id != "" {
		return "id:" + id
	}
	return "name:" + openLoopRate.ReplaceAllString(in.Doc.Tests[i].Name, "(open loop)")
}

// openLoopRate is the rate in the name of a compare document's open loop.
var openLoopRate = regexp.MustCompile(`\(open loop at [0-9.]+ req/s\)$`)

// micros re-records a nanosecond histogram in redis-benchmark's geometry
// (whole microseconds, 10 µs to 3 s).
func micros(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	rec := histo.NewRecorderGeometry(10, 3000000, histo.SigFigs)
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			rec.RecordN(b.From/1000, b.Count)
		}
	}
	return rec.Snapshot()
}

// Render re-renders one document as its run printed it: the full summary
// of each open test (pacer run), redis-benchmark's -q line of each closed
// test and a table of their latencies (pacer bench). Documents of pacer
// compare are drawn by the CLI, which owns compare's table.
func Render(w io.Writer, d *Document) error {
	var b strings.Builder
	var closed []Test
	open := 0
	for i := range d.Tests {
		t := &d.Tests[i]
		if _, err := t.figures(); err != nil {
			return err
		}
		if t.Mode == "closed" {
			closed = append(closed, *t)
			s := statsOf(t)
			fmt.Fprintf(&b, "%s: %s requests per second, p50=%s msec\n", safetext.Escape(t.Name), cfloat(2, s.rps), cfloat(3, s.p50))
			if err := BenchCommands(&b, t, true, TextOptions{}); err != nil {
				return err
			}
			continue
		}
		if open == 0 && d.Server != nil { // as run prints it, above the first test
			fmt.Fprintf(&b, "%s\n\n", ServerLine(d.Server))
		}
		open++
		if err := Text(&b, t, TextOptions{}); err != nil {
			return err
		}
		if err := writeTestNotes(&b, t); err != nil {
			return err
		}
	}
	if len(closed) > 0 {
		b.WriteString("\n")
		writeLatencies(&b, closed)
		for _, t := range closed {
			if t.Verdict != VerdictOK {
				fmt.Fprintf(&b, "%s: verdict %s (%s)\n", safetext.Escape(t.Name), safetext.Escape(t.Verdict), safetext.Escape(t.VerdictReason))
			}
			if t.SLO != nil {
				for _, l := range t.SLO.Lines() {
					fmt.Fprintf(&b, "%s: %s\n", safetext.Escape(t.Name), l)
				}
			}
		}
	}
	if d.Interrupted {
		b.WriteString("(the run was interrupted: partial result)\n")
	}
	if seed := Seed(d); seed != "" && len(d.Tests) > 0 {
		fmt.Fprintf(&b, "seed %s (--seed to repeat)\n", seed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Seed is the document's seed as its config's seed_str holds it, "" when
// it has none (documents written before seed_str existed: their numeric
// seed may have lost digits).
func Seed(d *Document) string {
	s, _ := d.Config["seed_str"].(string)
	return safetext.Escape(s)
}

// writeLatencies is the latency table of closed tests, one row per test.
func writeLatencies(b *strings.Builder, tests []Test) {
	width := len("latency (ms)")
	for _, t := range tests {
		width = max(width, len(safetext.Escape(t.Name)))
	}
	fmt.Fprintf(b, "%-*s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", width,
		"latency (ms)", "min", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max")
	for _, t := range tests {
		name := safetext.Escape(t.Name)
		if t.ResponseMs == nil {
			fmt.Fprintf(b, "%-*s %9s\n", width, name, "-")
			continue
		}
		s := *t.ResponseMs
		fmt.Fprintf(b, "%-*s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", width, name,
			s.Min, s.Mean, s.P50, s.P90, s.P95, s.P99, s.P999, s.P9999, s.Max)
	}
}

// Match is one test across several documents: Tests[i] is its result in
// the i-th document, nil where that document has no such test.
type Match struct {
	Name  string
	Tests []*Test
}

// MatchTests lines up the tests of the inputs: by id where the documents
// have ids, else by name; the k-th test of a key in one document matches
// the k-th of the same key in another. Tests come in the first
// document's order, then the others' unmatched ones in theirs.
func MatchTests(in []Input) []Match {
	var out []Match
	index := map[string]int{}
	for f, input := range in {
		seen := map[string]int{}
		for i := range input.Doc.Tests {
			k := input.key(i)
			seen[k]++
			k += "#" + strconv.Itoa(seen[k])
			m, ok := index[k]
			if !ok {
				m = len(out)
				index[k] = m
				out = append(out, Match{Name: input.Doc.Tests[i].Name, Tests: make([]*Test, len(in))})
			}
			if out[m].Tests[f] == nil {
				out[m].Tests[f] = &input.Doc.Tests[i]
			}
		}
	}
	return out
}

// SideBySide writes the tests of several documents side by side, one
// column per document: the percentiles of the response time (open tests)
// or latency (closed tests), throughput, counts and verdict, then each
// document's difference from the first, in ms and percent. It says which
// tests have no counterpart.
func SideBySide(w io.Writer, in []Input) error {
	var b strings.Builder
	const first = 22
	col := len(VerdictGeneratorBehind) // the widest cell but a label
	for _, input := range in {
		col = max(col, len(safetext.Escape(input.Label)))
	}
	for i, input := range in {
		d := input.Doc
		tests := "tests"
		if len(d.Tests) == 1 {
			tests = "test"
		}
		if input.Format != FormatPacer {
			fmt.Fprintf(&b, "[%d] %s: %s, closed loop (latency from the send), %d %s; it lacks %s\n", i+1, safetext.Escape(input.Label),
				input.Format, len(d.Tests), tests, strings.Join(input.Lacks, ", "))
			continue
		}
		fmt.Fprintf(&b, "[%d] %s: %s, %s mode, %d %s, started %s\n", i+1, safetext.Escape(input.Label),
			safetext.Escape(d.Tool.Name+" "+d.Tool.Version), safetext.Escape(d.Mode), len(d.Tests), tests, safetext.Escape(d.StartedAt))
	}
	b.WriteString("\n")
	var missing []string
	for _, m := range MatchTests(in) {
		var where, absent []string
		for f, t := range m.Tests {
			if t == nil {
				absent = append(absent, fmt.Sprintf("[%d]", f+1))
			} else {
				where = append(where, fmt.Sprintf("[%d]", f+1))
			}
		}
		if len(absent) > 0 {
			missing = append(missing, fmt.Sprintf("%s: only in %s", safetext.Escape(m.Name), strings.Join(where, " ")))
		}
		writeMatch(&b, in, m, first, col)
	}
	if len(missing) > 0 {
		b.WriteString("No counterpart:\n")
		for _, s := range missing {
			fmt.Fprintf(&b, "  %s\n", s)
		}
		b.WriteString("\n")
	}
	b.WriteString("Latency: response time from the intended send (open tests), latency from the actual send (closed tests).\n")
	if anyMessages(in) {
		b.WriteString("Pubsub and stream tests: the deliveries' latency, from each message's intended publish (a closed publisher's: from its send).\n")
	}
	for _, input := range in {
		if input.Format != FormatPacer {
			b.WriteString("n/a: a figure the file's format does not carry; other tools time each request from its send, as a closed loop.\n")
			break
		}
	}
	b.WriteString("Differences are of single runs: they say nothing about the run-to-run spread.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMatch writes the table of one test across the documents.
func writeMatch(b *strings.Builder, in []Input, m Match, first, col int) {
	dcol := 20
	fmt.Fprintf(b, "====== %s ======\n", safetext.Escape(m.Name))
	fmt.Fprintf(b, "%-*s", first, "")
	for _, input := range in {
		fmt.Fprintf(b, " %*s", col, safetext.Escape(input.Label))
	}
	base := m.Tests[0]
	for f := 1; f < len(in); f++ {
		if base != nil && m.Tests[f] != nil {
			fmt.Fprintf(b, " %*s", dcol, fmt.Sprintf("[%d]-[1] ms (%%)", f+1))
		}
	}
	b.WriteString("\n")
	text := func(name string, cell func(t *Test) string) {
		fmt.Fprintf(b, "%-*s", first, name)
		for _, t := range m.Tests {
			v := "-"
			if t != nil {
				v = cell(t)
			}
			fmt.Fprintf(b, " %*s", col, v)
		}
		b.WriteString("\n")
	}
	const lacking = "n/a" // a figure the test's format does not carry
	text("mode", func(t *Test) string { return t.Mode })
	text("target (req/s)", func(t *Test) string {
		if t.TargetRate == nil {
			return "-"
		}
		return strconv.FormatFloat(*t.TargetRate, 'f', -1, 64)
	})
	text("throughput (req/s)", func(t *Test) string { return strconv.FormatFloat(t.AchievedRate, 'f', 2, 64) })
	b.WriteString("latency (ms)\n")
	for _, p := range []string{"p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"} {
		fmt.Fprintf(b, "%-*s", first, "  "+p)
		vals := make([]float64, len(m.Tests))
		have := make([]bool, len(m.Tests))
		for f, t := range m.Tests {
			cell := "-"
			switch {
			case t != nil && t.Lacking(p):
				cell = lacking
			case t != nil && t.ResponseMs != nil:
				vals[f], _ = t.ResponseMs.Metric(p)
				have[f] = true
				cell = strconv.FormatFloat(vals[f], 'f', 3, 64)
			}
			fmt.Fprintf(b, " %*s", col, cell)
		}
		for f := 1; f < len(m.Tests); f++ {
			if base == nil || m.Tests[f] == nil {
				continue
			}
			cell := "-"
			if have[0] && have[f] {
				cell = diff(vals[0], vals[f])
			}
			fmt.Fprintf(b, " %*s", dcol, cell)
		}
		b.WriteString("\n")
	}
	count := func(name string, n func(c scheduler.Counts) uint64) {
		text(name, func(t *Test) string {
			if t.Lacking("counts") {
				return lacking
			}
			return strconv.FormatUint(n(t.Counts), 10)
		})
	}
	count("scheduled", func(c scheduler.Counts) uint64 { return c.Scheduled })
	count("completed", func(c scheduler.Counts) uint64 { return c.Completed })
	count("errors", func(c scheduler.Counts) uint64 { return c.Errors })
	count("timeouts", func(c scheduler.Counts) uint64 { return c.Timeouts })
	count("unsent", func(c scheduler.Counts) uint64 { return c.Unsent })
	text("verdict", func(t *Test) string {
		if t.Verdict == "" && t.lacks != nil {
			return lacking
		}
		return safetext.Escape(t.Verdict)
	})
	if hasSLO(m) {
		text("slo", func(t *Test) string {
			switch {
			case t.SLO == nil:
				return "-"
			case t.SLO.Pass:
				return "pass"
			}
			return "violated"
		})
	}
	b.WriteString("\n")
}

func hasSLO(m Match) bool {
	for _, t := range m.Tests {
		if t != nil && t.SLO != nil {
			return true
		}
	}
	return false
}

// diff formats v−base in ms and in percent of base.
func diff(base, v float64) string {
	d := v - base
	s := strconv.FormatFloat(d, 'f', 3, 64)
	if d >= 0 {
		s = "+" + s
	}
	if base > 0 {
		p := 100 * d / base
		ps := strconv.FormatFloat(p, 'f', 1, 64)
		if p >= 0 {
			ps = "+" + ps
		}
		s += " (" + ps + "%)"
	}
	return s
}

// writeTestNotes writes what run prints under a test's report (see
// WriteNotes): the notes on its percentiles (with their confidence
// intervals when it recorded them, --ci) and, for repeats, their table. A
// document written without percentile notes gets none.
func writeTestNotes(w io.Writer, t *Test) error {
	if len(t.ResponsePercentiles) == 0 {
		return nil
	}
	return WriteNotes(w, t, t.ResponsePercentiles[0].CI95 != nil, t.Repeats)
}

// anyMessages reports whether a document holds a pubsub or stream test.
func anyMessages(in []Input) bool {
	for _, input := range in {
		for _, t := range input.Doc.Tests {
			if t.Messages != nil {
				return true
			}
		}
	}
	return false
}
