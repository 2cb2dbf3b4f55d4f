package peers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
)

// This file reads memtier_benchmark's --json-out-file. The file is walked
// token by token as it streams in (memtier_series.go), never held or
// decoded whole: a run of weeks has millions of per-second entries, which
// as maps took ten times the file's size. Each command's series is merged into at most
// maxSeriesIntervals intervals as it is read.

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

// memtierCommand is one command's object in a memtier stats section, as
// far as pacer reads it.
type memtierCommand struct {
	name                                      string
	count, opsSec, average, latency, min, max *float64
	// percentiles are those --print-percentiles printed ("p99.900"),
	// compressed the HdrHistogram of "Histogram log format".
	percentiles map[string]float64
	compressed  string
	series      *seriesMerger
}

// memtierSection is a stats section: its commands in file order and its
// runtime (ms, 0 when absent).
type memtierSection struct {
	commands  []*memtierCommand
	runtimeMs float64
}

// readMemtierJSON reads memtier_benchmark's --json-out-file: the
// "configuration" it ran with and one stats section ("ALL STATS", or for
// several runs "AGGREGATED AVERAGE RESULTS (N runs)", else "BEST RUN
// RESULTS"), a test per command that ran (Sets, Gets, …, and Totals).
func readMemtierJSON(label string, data []byte) (report.Input, error) {
	return readMemtier(label, bytes.NewReader(data))
}

// readMemtier is readMemtierJSON reading from r as it streams in: what it
// holds is bounded by the intervals kept, not by the file's size.
func readMemtier(label string, r io.Reader) (report.Input, error) {
	w := newWalker(r)
	rank := func(k string) int { // the section to show: lower is better
		switch {
		case k == "ALL STATS":
			return 1
		case strings.HasPrefix(k, "AGGREGATED AVERAGE RESULTS"):
			return 2
		case k == "BEST RUN RESULTS":
			return 3
		}
		return 0
	}
	var best *memtierSection
	section, bestRank := "", 4
	var config map[string]json.RawMessage
	budget := maxHeldIntervals
	isObject, err := w.object(func(k string) error {
		switch r := rank(k); {
		case r > 0 && r < bestRank:
			s, err := readMemtierSection(w, &budget)
			if err != nil {
				return fmt.Errorf("%s: %w", report.CutText(k), err)
			}
			best, section, bestRank = s, k, r
			return nil
		case k == "configuration" && config == nil:
			if err := w.dec.Decode(&config); err != nil {
				config = map[string]json.RawMessage{}
			}
			return nil
		}
		return w.skip()
	})
	if err == nil && !isObject {
		err = errors.New("not an object")
	}
	if err != nil {
		return report.Input{}, fmt.Errorf("not a memtier_benchmark result: %w", err)
	}
	if best == nil {
		return report.Input{}, errors.New("memtier_benchmark result: no ALL STATS section")
	}
	cmds := best.commands
	sort.SliceStable(cmds, func(i, j int) bool { // Totals last
		if (cmds[i].name == "Totals") != (cmds[j].name == "Totals") {
			return cmds[j].name == "Totals"
		}
		return cmds[i].name < cmds[j].name
	})
	var tests []report.Test
	lacks := map[string]bool{}
	withHist := true
	merged, dropped := 0, 0
	for _, c := range cmds {
		if c.opsSec == nil {
			continue // Runtime, the histograms' arrays, anything else
		}
		if c.count != nil && *c.count == 0 {
			continue // Waits, in a run without WAIT
		}
		if len(tests) == maxForeignTests {
			return report.Input{}, fmt.Errorf("memtier_benchmark result: more than %d commands", maxForeignTests)
		}
		t, hasHist, err := memtierTest(c, best.runtimeMs)
		if err != nil {
			return report.Input{}, fmt.Errorf("memtier_benchmark result: %s: %w", report.CutText(c.name), err)
		}
		if c.series != nil {
			merged = max(merged, c.series.width)
			if c.series.dropped {
				dropped++
			}
		}
		withHist = withHist && hasHist
		addLacks(lacks, &t)
		tests = append(tests, t)
	}
	if len(tests) == 0 {
		return report.Input{}, errors.New("memtier_benchmark result: no command ran")
	}
	d := foreignDoc("memtier_benchmark", tests)
	in := report.Input{Label: label, Doc: d, Format: report.FormatMemtierJSON, Lacks: sortedLacks(lacks)}
	if !withHist {
		in.Lacks = append(in.Lacks, "histograms")
	}
	in.Lacks = append(in.Lacks, lacksAll...)
	if section != "ALL STATS" {
		in.Lacks = append(in.Lacks, "single runs (the file's "+strconv.Quote(section)+" are shown)")
	}
	if merged > 1 {
		in.Lacks = append(in.Lacks, fmt.Sprintf("single seconds (a series of more than %d is merged into intervals of %d s or more, "+
			"whose percentiles are the highest of their seconds')", maxSeriesIntervals, merged))
	}
	if dropped > 0 {
		in.Lacks = append(in.Lacks, fmt.Sprintf("the series of %d commands (past %d intervals in all)", dropped, maxHeldIntervals))
	}
	if config != nil {
		for _, k := range []string{"authenticate", "uri"} { // a password
			if v, ok := config[k]; ok && string(v) != `""` && string(v) != "null" {
				config[k] = json.RawMessage(`"***"`)
			}
		}
		in.SetConfig(config)
	}
	return in, report.CheckDocument(d)
}

// readMemtierSection reads a stats section's object: "Runtime" and the
// commands' objects (other values are skipped).
func readMemtierSection(w *walker, budget *int) (*memtierSection, error) {
	s := &memtierSection{}
	isObject, err := w.object(func(k string) error {
		if k == "Runtime" {
			_, err := w.object(func(f string) error {
				if f != "Total duration" {
					return w.skip()
				}
				v, ok, err := w.number()
				if ok && v > 0 && !math.IsInf(v, 0) {
					s.runtimeMs = v
				}
				return err
			})
			return err
		}
		if len(s.commands) > maxForeignTests {
			return fmt.Errorf("more than %d commands", maxForeignTests)
		}
		c := &memtierCommand{name: k}
		isObject, err := w.object(func(f string) error { return readMemtierField(w, c, f, budget) })
		if isObject {
			s.commands = append(s.commands, c)
			if c.series != nil {
				*budget -= len(c.series.buckets)
			}
		}
		return err
	})
	if err == nil && !isObject {
		err = errors.New("not an object")
	}
	return s, err
}

// readMemtierField reads one field of a command's object.
func readMemtierField(w *walker, c *memtierCommand, f string, budget *int) error {
	num := func(dst **float64) error {
		v, ok, err := w.number()
		if ok {
			*dst = &v
		}
		return err
	}
	switch f {
	case "Count":
		return num(&c.count)
	case "Ops/sec":
		return num(&c.opsSec)
	case "Average Latency":
		return num(&c.average)
	case "Latency": // before "Average Latency"
		return num(&c.latency)
	case "Min Latency":
		return num(&c.min)
	case "Max Latency":
		return num(&c.max)
	case "Percentile Latencies":
		c.percentiles = map[string]float64{}
		_, err := w.object(func(k string) error {
			if k == "Histogram log format" {
				_, err := w.object(func(h string) error {
					if h != "Compressed Histogram" {
						return w.skip()
					}
					s, _, err := w.str()
					c.compressed = s
					return err
				})
				return err
			}
			v, ok, err := w.number()
			if ok && len(c.percentiles) < len(histo.Percentiles)*4 {
				c.percentiles[k] = v
			}
			return err
		})
		return err
	case "Time-Serie":
		c.series = newSeriesMerger(min(maxSeriesIntervals, *budget))
		_, err := w.object(func(k string) error { return c.series.second(w, k) })
		return err
	}
	return w.skip()
}

// memtierTest is one command's result as a closed-loop test: its rate,
// count and latencies (ms); its percentiles from its histogram when the
// file has one (every percentile then), else those --print-percentiles
// printed; its per-second series as intervals (merged when long).
func memtierTest(c *memtierCommand, runtimeMs float64) (report.Test, bool, error) {
	t := report.Test{Name: report.CutText(c.name), Mode: "closed", Errors: map[string]uint64{}}
	if c.name != "Totals" {
		t.ID = strings.TrimSuffix(strings.ToLower(c.name), "s")
		t.Name = strings.ToUpper(t.ID)
	} else {
		t.Name = "Totals (memtier)"
	}
	t.AchievedRate = *c.opsSec
	if err := finite("Ops/sec", t.AchievedRate); err != nil {
		return t, false, err
	}
	have := map[string]bool{}
	counted := false
	if c.count != nil && *c.count >= 0 && *c.count < 1<<63 {
		t.Counts.Completed, t.Counts.Sent, t.Counts.Scheduled = uint64(*c.count), uint64(*c.count), uint64(*c.count)
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
	mean := c.average
	if mean == nil {
		mean = c.latency
	}
	for _, f := range []struct {
		m string
		v *float64
	}{{"mean", mean}, {"min", c.min}, {"max", c.max}} {
		if err := set(f.m, f.v); err != nil {
			return t, false, err
		}
	}
	hasHist, hist := false, histo.Summary{}
	if c.compressed != "" {
		enc, sum, err := memtierHistogram(c.compressed)
		if err != nil {
			return t, false, err
		}
		t.Histograms.Response, hist, hasHist = enc, sum, true
	}
	for k, v := range c.percentiles {
		p, err := strconv.ParseFloat(strings.TrimPrefix(k, "p"), 64)
		if err != nil {
			continue
		}
		if m := report.PercentileMetric(p); m != "" {
			if err := set(m, &v); err != nil {
				return t, false, err
			}
		}
	}
	if err := ordered(&s, func(m string) bool { return have[m] }); err != nil {
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
	if c.series != nil {
		t.Intervals = c.series.intervals()
		if len(t.Intervals) > 0 {
			t.IntervalS = float64(c.series.width)
		}
	}
	t.SetLacking(lacking(have, !counted))
	return t, hasHist, nil
}

// memtierHistogram re-encodes memtier's latency histogram (µs, its own
// geometry) as pacer's (ns): each bucket recorded at its highest
// equivalent value, so pacer's percentiles are memtier's. A geometry
// whose counts would take more than half a MB is refused before it is
// decoded.
func memtierHistogram(enc string) (string, histo.Summary, error) {
	low, high, sig, err := report.ReadGeometry(enc)
	if err != nil {
		return "", histo.Summary{}, err
	}
	if low < 1 || high > 1e11 || high <= low || sig < 1 || sig > 3 {
		return "", histo.Summary{}, fmt.Errorf("%w: a histogram of %d to %d µs, %d digits: not memtier's", report.ErrGeometry, low, high, sig)
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
