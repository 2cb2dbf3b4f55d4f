package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
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
// it. The results of other tools are read by report/peers
// (peers.ReadInput), which hands pacer's own documents to it.
func ReadInput(label string, data []byte) (Input, error) {
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
