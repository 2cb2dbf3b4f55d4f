package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scenarios"
)

// This file reads the results of the tools people compare pacer with, so
// that pacer report puts them side by side with pacer's runs: a reader
// per format turns a file into a Document of closed-loop tests (those
// tools time each request from its send) with the figures the format
// has, and says which it lacks (Input.Lacks).

// Formats an Input is read from.
const (
	// FormatPacer is a pacer.result/v1 document (--json).
	FormatPacer = ""
	// FormatRedisBenchmarkCSV is redis-benchmark's --csv output: a line
	// per test with its requests per second and, from Redis 6.2 on, its
	// mean, min, p50, p95, p99 and max latency in ms.
	FormatRedisBenchmarkCSV = "redis-benchmark --csv"
	// FormatMemtierJSON is memtier_benchmark's --json-out-file: per
	// command its ops/sec, count, mean, min and max latency, the
	// percentiles of --print-percentiles, a per-second series and (since
	// 2020) its HdrHistogram.
	FormatMemtierJSON = "memtier_benchmark --json-out-file"
)

// maxForeignTests bounds the tests a file of another tool may hold.
const maxForeignTests = 1000

// lacksAll are figures no other tool's result carries: pacer's own.
var lacksAll = []string{"service time", "send lag", "verdicts"}

// readForeign reads data as another tool's result, if it is one: ok is
// false when it is none of the formats it knows (the caller then reads a
// pacer document).
func readForeign(label string, data []byte) (in Input, ok bool, err error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case len(trimmed) > 0 && trimmed[0] == '"':
		in, err = readRedisBenchmarkCSV(label, trimmed)
		return in, true, err
	case isMemtierJSON(trimmed):
		in, err = readMemtierJSON(label, trimmed)
		return in, true, err
	}
	return Input{}, false, nil
}

// foreignDoc wraps tests read from another tool's file.
func foreignDoc(tool string, tests []Test) *Document {
	return &Document{Schema: Schema, Mode: "closed", Tool: Tool{Name: tool}, Config: map[string]any{}, Tests: tests}
}

// catalogueID is the id of pacer's test that a tool's test name matches
// (redis-benchmark's titles are pacer's), "" when none.
func catalogueID(name string) string {
	for _, t := range scenarios.Catalogue {
		if strings.EqualFold(t.Title, name) {
			return t.ID()
		}
	}
	return ""
}

// finite checks a figure read from a file.
func finite(what string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%s %g: not a figure", what, v)
	}
	return nil
}

// ordered checks that the figures of s a file gave (have) rise with the
// rank: min ≤ p50 ≤ … ≤ p99.99 ≤ max, and the mean within [min, max]. A
// file where p50 is 3 ms and p99 1 ms was not written by the tool it
// claims, and side by side it would rank tools on figures that cannot be.
func ordered(s *histo.Summary, have map[string]bool) error {
	prev, prevName := math.Inf(-1), ""
	for _, m := range summaryMetrics {
		if m == "mean" || !have[m] {
			continue
		}
		v := *s.Field(m)
		if v < prev {
			return fmt.Errorf("%s %g is below %s %g: percentiles that fall are not a distribution", m, v, prevName, prev)
		}
		prev, prevName = v, m
	}
	if have["mean"] && (have["min"] && s.Mean < s.Min || have["max"] && s.Mean > s.Max) {
		return fmt.Errorf("mean %g is outside min %g and max %g", s.Mean, s.Min, s.Max)
	}
	return nil
}

// readRedisBenchmarkCSV reads redis-benchmark --csv: a header line
// ("test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
// "p95_latency_ms","p99_latency_ms","max_latency_ms") and a line per
// test; before Redis 6.2, lines of test and rps only, without a header.
func readRedisBenchmarkCSV(label string, data []byte) (Input, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	cols := []string{"test", "rps"}
	var tests []Test
	lacks := map[string]bool{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Input{}, fmt.Errorf("not a redis-benchmark --csv result: %w", err)
		}
		if line == 1 && len(rec) > 0 && rec[0] == "test" {
			cols = append([]string(nil), rec...)
			continue
		}
		if len(rec) != len(cols) {
			return Input{}, fmt.Errorf("not a redis-benchmark --csv result: line %d has %d fields, want %d", line, len(rec), len(cols))
		}
		if len(tests) == maxForeignTests {
			return Input{}, fmt.Errorf("redis-benchmark --csv: more than %d tests", maxForeignTests)
		}
		name := cutText(rec[0])
		t := Test{ID: catalogueID(name), Name: name, Mode: "closed", Errors: map[string]uint64{}}
		s := histo.Summary{}
		have := map[string]bool{}
		for i, c := range cols[1:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[i+1]), 64)
			if err == nil {
				err = finite(c, v)
			}
			if err != nil {
				return Input{}, fmt.Errorf("redis-benchmark --csv: line %d, %s: %q is not a number", line, c, rec[i+1])
			}
			metric := strings.TrimSuffix(c, "_latency_ms")
			switch metric {
			case "rps":
				t.AchievedRate = v
			case "avg":
				s.Mean, have["mean"] = v, true
			case "min", "max", "p50", "p90", "p95", "p99", "p99.9", "p99.99":
				*s.Field(metric), have[metric] = v, true
			}
		}
		if err := ordered(&s, have); err != nil {
			return Input{}, fmt.Errorf("redis-benchmark --csv: line %d: %w", line, err)
		}
		if len(have) > 0 {
			t.ResponseMs = &s
		}
		t.lacks = lacking(have, true)
		for m := range t.lacks {
			lacks[m] = true
		}
		tests = append(tests, t)
	}
	if len(tests) == 0 {
		return Input{}, errors.New("redis-benchmark --csv: no tests")
	}
	in := Input{Label: label, Doc: foreignDoc("redis-benchmark", tests), Format: FormatRedisBenchmarkCSV}
	in.Lacks = append(sortedLacks(lacks), "histograms", "intervals")
	in.Lacks = append(in.Lacks, lacksAll...)
	return in, checkDocument(in.Doc)
}

// summaryMetrics are the figures of a Summary, in order.
var summaryMetrics = []string{"min", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"}

// lacking is the set of figures a test read from another tool does not
// have: the summary's it was not given and, unless counted, its counts.
func lacking(have map[string]bool, noCounts bool) map[string]bool {
	out := map[string]bool{}
	for _, m := range summaryMetrics {
		if !have[m] {
			out[m] = true
		}
	}
	if noCounts {
		out["counts"] = true
	}
	return out
}

// sortedLacks lists the figures in the order a report shows them.
func sortedLacks(set map[string]bool) []string {
	var out []string
	for _, m := range append(append([]string{}, summaryMetrics...), "counts") {
		if set[m] {
			out = append(out, m)
		}
	}
	return out
}

// Lacking says whether the test, read from another tool's result, lacks
// a figure (a Summary's metric name, or "counts").
func (t *Test) Lacking(metric string) bool { return t.lacks[metric] }

// isMemtierJSON tells memtier_benchmark's JSON by its sections.
func isMemtierJSON(data []byte) bool {
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	head := data[:min(len(data), 1<<20)]
	return !bytes.Contains(head, []byte(`"schema"`)) &&
		(bytes.Contains(head, []byte(`"ALL STATS"`)) || bytes.Contains(head, []byte(`"BEST RUN RESULTS"`)) ||
			bytes.Contains(head, []byte(`"run information"`)))
}

// memtierCommand is one command's object in a memtier stats section.
type memtierCommand struct {
	Count       *float64                   `json:"Count"`
	OpsSec      *float64                   `json:"Ops/sec"`
	Average     *float64                   `json:"Average Latency"`
	Latency     *float64                   `json:"Latency"` // before "Average Latency"
	Min         *float64                   `json:"Min Latency"`
	Max         *float64                   `json:"Max Latency"`
	Percentiles map[string]json.RawMessage `json:"Percentile Latencies"`
	Series      map[string]map[string]any  `json:"Time-Serie"`
}

// readMemtierJSON reads memtier_benchmark's --json-out-file: the
// "configuration" it ran with and one stats section ("ALL STATS", or for
// several runs "AGGREGATED AVERAGE RESULTS (N runs)"), a test per command
// that ran (Sets, Gets, …, and Totals).
func readMemtierJSON(label string, data []byte) (Input, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return Input{}, fmt.Errorf("not a memtier_benchmark result: %w", err)
	}
	section := ""
	for k := range top {
		switch {
		case k == "ALL STATS":
			section = k
		case strings.HasPrefix(k, "AGGREGATED AVERAGE RESULTS") && section != "ALL STATS":
			section = k
		case k == "BEST RUN RESULTS" && section == "":
			section = k
		}
	}
	if section == "" {
		return Input{}, errors.New("memtier_benchmark result: no ALL STATS section")
	}
	var stats map[string]json.RawMessage
	if err := json.Unmarshal(top[section], &stats); err != nil {
		return Input{}, fmt.Errorf("memtier_benchmark result: %s: %w", section, err)
	}
	var runtimeMs float64
	if rt, ok := stats["Runtime"]; ok {
		var r struct {
			Duration *float64 `json:"Total duration"`
		}
		if json.Unmarshal(rt, &r) == nil && r.Duration != nil && *r.Duration > 0 {
			runtimeMs = *r.Duration
		}
	}
	names := make([]string, 0, len(stats))
	for k := range stats {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { // Totals last
		if (names[i] == "Totals") != (names[j] == "Totals") {
			return names[j] == "Totals"
		}
		return names[i] < names[j]
	})
	var tests []Test
	lacks := map[string]bool{}
	withHist := true
	for _, name := range names {
		var c memtierCommand
		if err := json.Unmarshal(stats[name], &c); err != nil || c.OpsSec == nil {
			continue // Runtime, the histograms' arrays, anything else
		}
		if c.Count != nil && *c.Count == 0 {
			continue // Waits, in a run without WAIT
		}
		if len(tests) == maxForeignTests {
			return Input{}, fmt.Errorf("memtier_benchmark result: more than %d commands", maxForeignTests)
		}
		t, hasHist, err := memtierTest(name, c, runtimeMs)
		if err != nil {
			return Input{}, fmt.Errorf("memtier_benchmark result: %s: %w", cutText(name), err)
		}
		withHist = withHist && hasHist
		for m := range t.lacks {
			lacks[m] = true
		}
		tests = append(tests, t)
	}
	if len(tests) == 0 {
		return Input{}, errors.New("memtier_benchmark result: no command ran")
	}
	d := foreignDoc("memtier_benchmark", tests)
	in := Input{Label: label, Doc: d, Format: FormatMemtierJSON, Lacks: sortedLacks(lacks)}
	if !withHist {
		in.Lacks = append(in.Lacks, "histograms")
	}
	in.Lacks = append(in.Lacks, lacksAll...)
	if section != "ALL STATS" {
		in.Lacks = append(in.Lacks, "single runs (the file's "+strconv.Quote(section)+" are shown)")
	}
	if raw, ok := top["configuration"]; ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&in.config) == nil {
			for _, k := range []string{"authenticate", "uri"} { // a password
				if v, ok := in.config[k]; ok && string(v) != `""` && string(v) != "null" {
					in.config[k] = json.RawMessage(`"***"`)
				}
			}
		}
	}
	return in, checkDocument(d)
}

// memtierTest is one command's result as a closed-loop test: its rate,
// count and latencies (ms); its percentiles from its histogram when the
// file has one (every percentile then), else those --print-percentiles
// printed; its per-second series as intervals.
func memtierTest(name string, c memtierCommand, runtimeMs float64) (Test, bool, error) {
	display := cutText(name)
	t := Test{Name: display, Mode: "closed", Errors: map[string]uint64{}}
	if name != "Totals" {
		t.ID = strings.TrimSuffix(strings.ToLower(name), "s")
		t.Name = strings.ToUpper(t.ID)
	} else {
		t.Name = "Totals (memtier)"
	}
	t.AchievedRate = *c.OpsSec
	if err := finite("Ops/sec", t.AchievedRate); err != nil {
		return t, false, err
	}
	have := map[string]bool{}
	counted := false
	if c.Count != nil && *c.Count >= 0 && *c.Count < 1<<63 {
		t.Counts.Completed, t.Counts.Sent, t.Counts.Scheduled = uint64(*c.Count), uint64(*c.Count), uint64(*c.Count)
		counted = true
	}
	t.DurationS = runtimeMs / 1000
	s := histo.Summary{}
	set := func(metric string, v *float64) error {
		if v == nil {
			return nil
		}
		if err := finite(metric, *v); err != nil {
			return err
		}
		*s.Field(metric), have[metric] = *v, true
		return nil
	}
	mean := c.Average
	if mean == nil {
		mean = c.Latency
	}
	for _, f := range []struct {
		m string
		v *float64
	}{{"mean", mean}, {"min", c.Min}, {"max", c.Max}} {
		if err := set(f.m, f.v); err != nil {
			return t, false, err
		}
	}
	hasHist, hist := false, histo.Summary{}
	for k, raw := range c.Percentiles {
		if k == "Histogram log format" {
			var h struct {
				Compressed string `json:"Compressed Histogram"`
			}
			if json.Unmarshal(raw, &h) == nil && h.Compressed != "" {
				enc, sum, err := memtierHistogram(h.Compressed)
				if err != nil {
					return t, false, err
				}
				t.Histograms.Response, hist, hasHist = enc, sum, true
			}
			continue
		}
		p, err := strconv.ParseFloat(strings.TrimPrefix(k, "p"), 64)
		var v float64
		if err == nil {
			err = json.Unmarshal(raw, &v)
		}
		if err != nil {
			continue
		}
		if m := percentileMetric(p); m != "" {
			if err := set(m, &v); err != nil {
				return t, false, err
			}
		}
	}
	if err := ordered(&s, have); err != nil {
		return t, false, err
	}
	if hasHist { // every percentile: what memtier did not print, from the histogram
		for _, m := range summaryMetrics {
			if !have[m] {
				*s.Field(m) = *hist.Field(m)
			}
			have[m] = true
		}
		// A bucket's highest equivalent value can pass the exact max
		// memtier printed (13.312 over 13.311 ms): held within it.
		for _, m := range summaryMetrics[2:8] {
			v := s.Field(m)
			*v = min(max(*v, s.Min), s.Max)
		}
	}
	if len(have) > 0 {
		t.ResponseMs = &s
	}
	t.Intervals = memtierSeries(c.Series)
	if len(t.Intervals) > 0 {
		t.IntervalS = 1
	}
	t.lacks = lacking(have, !counted)
	return t, hasHist, nil
}

// percentileMetric names a percentile a Summary has ("p99.9"), "" for
// others.
func percentileMetric(p float64) string {
	for _, q := range histo.Percentiles {
		if math.Abs(p-q) < 1e-9 {
			return "p" + strconv.FormatFloat(q, 'f', -1, 64)
		}
	}
	return ""
}

// memtierHistogram re-encodes memtier's latency histogram (µs, its own
// geometry) as pacer's (ns): each bucket recorded at its highest
// equivalent value, so pacer's percentiles are memtier's. A geometry
// whose counts would take more than half a MB is refused before it is
// decoded.
func memtierHistogram(enc string) (string, histo.Summary, error) {
	low, high, sig, err := readGeometry(enc)
	if err != nil {
		return "", histo.Summary{}, err
	}
	if low < 1 || high > 1e11 || high <= low || sig < 1 || sig > 3 {
		return "", histo.Summary{}, fmt.Errorf("%w: a histogram of %d to %d µs, %d digits: not memtier's", errGeometry, low, high, sig)
	}
	h, err := histo.Decode(enc)
	if err != nil {
		return "", histo.Summary{}, err
	}
	rec := histo.NewRecorder()
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			rec.RecordN(min(b.To, histo.Highest/1000)*1000, b.Count)
		}
	}
	ns := rec.Snapshot()
	out, err := histo.Encode(ns)
	return out, histo.Summarize(ns), err
}

// memtierSeries turns memtier's per-second "Time-Serie" (keyed by the
// second from the start) into intervals of one second: the count, and the
// mean, min, max, p50, p99 and p99.9 it printed (ms).
func memtierSeries(series map[string]map[string]any) []Interval {
	if len(series) > 1e6 {
		return nil
	}
	secs := make([]int, 0, len(series))
	for k := range series {
		if s, err := strconv.Atoi(k); err == nil && s >= 0 && s < 1e9 {
			secs = append(secs, s)
		}
	}
	sort.Ints(secs)
	out := make([]Interval, 0, len(secs))
	for _, sec := range secs {
		v := series[strconv.Itoa(sec)]
		num := func(k string) (float64, bool) {
			f, ok := v[k].(float64)
			return f, ok && finite(k, f) == nil
		}
		iv := Interval{StartS: float64(sec), DurationS: 1}
		if n, ok := num("Count"); ok && n < 1<<63 {
			iv.Completed, iv.Sent, iv.Scheduled = uint64(n), uint64(n), uint64(n)
		}
		s := histo.Summary{}
		have := map[string]bool{}
		for k, m := range map[string]string{"Average Latency": "mean", "Min Latency": "min", "Max Latency": "max"} {
			if f, ok := num(k); ok {
				*s.Field(m), have[m] = f, true
			}
		}
		for k := range v {
			if !strings.HasPrefix(k, "p") {
				continue
			}
			p, err := strconv.ParseFloat(k[1:], 64)
			f, ok := num(k)
			if m := percentileMetric(p); err == nil && ok && m != "" {
				*s.Field(m), have[m] = f, true
			}
		}
		// Figures that fall with the rank are left out, as a figure
		// that is not a number is.
		if len(have) > 0 && iv.Completed > 0 && ordered(&s, have) == nil {
			iv.ResponseMs = &s
		}
		out = append(out, iv)
	}
	return out
}
