package report

import "encoding/json"

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

// Lacking says whether the test, read from another tool's result, lacks
// a figure (a Summary's metric name, or "counts").
func (t *Test) Lacking(metric string) bool { return t.lacks[metric] }

// SetLacking records, for a test read from another tool's result (see
// report/peers), the figures its format does not carry (metric names and
// "counts"); Lacking answers from them.
func (t *Test) SetLacking(metrics map[string]bool) { t.lacks = metrics }

// Foreign says whether the test was read from another tool's result
// (SetLacking was called), not measured or written by pacer.
func (t *Test) Foreign() bool { return t.lacks != nil }

// SetConfig keeps a document's config object as its values' JSON text,
// for an input read from another tool's file (see Config).
func (in *Input) SetConfig(config map[string]json.RawMessage) { in.config = config }

// CheckDocument checks and bounds a document read back, as ReadInput
// does, for the readers of other tools' results (report/peers): an error
// for what cannot be a pacer result, texts cut and latencies clamped in
// place otherwise.
func CheckDocument(d *Document) error { return checkDocument(d) }

// CutText cuts a text read from a file to the length a document keeps,
// on a character boundary, saying how much was cut.
func CutText(s string) string { return cutText(s) }

// ErrGeometry refuses a histogram of another geometry.
var ErrGeometry = errGeometry

// ReadGeometry reads the header of a base64 HdrHistogram V2 compressed
// encoding (lowest and highest trackable values, significant digits),
// without decoding its counts.
func ReadGeometry(enc string) (lowest, highest int64, sigFigs int, err error) {
	return readGeometry(enc)
}
