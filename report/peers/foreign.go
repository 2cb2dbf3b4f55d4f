package peers

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
)

// This file reads the results of the tools people compare pacer with, so
// that pacer report puts them side by side with pacer's runs: a reader
// per format turns a file into a Document of closed-loop tests (those
// tools time each request from its send) with the figures the format
// has, and says which it lacks (Input.Lacks).

// maxForeignTests bounds the tests a file of another tool may hold.
const maxForeignTests = 1000

// lacksAll are figures no other tool's result carries: pacer's own.
var lacksAll = []string{"service time", "send lag", "verdicts"}

// readForeign reads data as another tool's result, if it is one: ok is
// false when it is none of the formats it knows (the caller then reads a
// pacer document).
func readForeign(label string, data []byte) (in report.Input, ok bool, err error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case len(trimmed) > 0 && trimmed[0] == '"':
		in, err = readRedisBenchmarkCSV(label, trimmed)
		return in, true, err
	case isMemtierJSON(trimmed):
		in, err = readMemtierJSON(label, trimmed)
		return in, true, err
	}
	return report.Input{}, false, nil
}

// foreignDoc wraps tests read from another tool's file.
func foreignDoc(tool string, tests []report.Test) *report.Document {
	return &report.Document{Schema: report.Schema, Mode: "closed", Tool: report.Tool{Name: tool}, Config: map[string]any{}, Tests: tests}
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
func ordered(s *histo.Summary, have func(metric string) bool) error {
	prev, prevName := math.Inf(-1), ""
	for _, m := range summaryMetrics {
		if m == "mean" || !have(m) {
			continue
		}
		v := *s.Field(m)
		if v < prev {
			return fmt.Errorf("%s %g is below %s %g: percentiles that fall are not a distribution", m, v, prevName, prev)
		}
		prev, prevName = v, m
	}
	if have("mean") && (have("min") && s.Mean < s.Min || have("max") && s.Mean > s.Max) {
		return fmt.Errorf("mean %g is outside min %g and max %g", s.Mean, s.Min, s.Max)
	}
	return nil
}

// readRedisBenchmarkCSV reads redis-benchmark --csv: a header line
// ("test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
// "p95_latency_ms","p99_latency_ms","max_latency_ms") and a line per
// test; before Redis 6.2, lines of test and rps only, without a header.
func readRedisBenchmarkCSV(label string, data []byte) (report.Input, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	cols := []string{"test", "rps"}
	var tests []report.Test
	lacks := map[string]bool{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return report.Input{}, fmt.Errorf("not a redis-benchmark --csv result: %w", err)
		}
		if line == 1 && len(rec) > 0 && rec[0] == "test" {
			cols = append([]string(nil), rec...)
			continue
		}
		if len(rec) != len(cols) {
			return report.Input{}, fmt.Errorf("not a redis-benchmark --csv result: line %d has %d fields, want %d", line, len(rec), len(cols))
		}
		if len(tests) == maxForeignTests {
			return report.Input{}, fmt.Errorf("redis-benchmark --csv: more than %d tests", maxForeignTests)
		}
		name := report.CutText(rec[0])
		t := report.Test{ID: catalogueID(name), Name: name, Mode: "closed", Errors: map[string]uint64{}}
		s := histo.Summary{}
		have := map[string]bool{}
		for i, c := range cols[1:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[i+1]), 64)
			if err == nil {
				err = finite(c, v)
			}
			if err != nil {
				return report.Input{}, fmt.Errorf("redis-benchmark --csv: line %d, %s: %q is not a number", line, c, rec[i+1])
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
		if err := ordered(&s, func(m string) bool { return have[m] }); err != nil {
			return report.Input{}, fmt.Errorf("redis-benchmark --csv: line %d: %w", line, err)
		}
		if len(have) > 0 {
			t.ResponseMs = &s
		}
		tl := lacking(have, true)
		t.SetLacking(tl)
		for m := range tl {
			lacks[m] = true
		}
		tests = append(tests, t)
	}
	if len(tests) == 0 {
		return report.Input{}, errors.New("redis-benchmark --csv: no tests")
	}
	in := report.Input{Label: label, Doc: foreignDoc("redis-benchmark", tests), Format: report.FormatRedisBenchmarkCSV}
	in.Lacks = append(sortedLacks(lacks), "histograms", "intervals")
	in.Lacks = append(in.Lacks, lacksAll...)
	return in, report.CheckDocument(in.Doc)
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

// addLacks adds the figures t lacks to set.
func addLacks(set map[string]bool, t *report.Test) {
	for _, m := range append(append([]string{}, summaryMetrics...), "counts") {
		if t.Lacking(m) {
			set[m] = true
		}
	}
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
