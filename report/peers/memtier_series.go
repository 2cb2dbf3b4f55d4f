package peers

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// Bounds on memtier's per-second series.
const (
	// maxSeriesIntervals is the most intervals a command's series keeps:
	// a longer series is merged into intervals of 2, 4, 8, … seconds as it
	// is read. An hour of seconds stays as memtier wrote it.
	maxSeriesIntervals = 3600
	// maxHeldIntervals bounds the intervals of all the commands of a
	// file; a command whose series would pass it (past minSeriesIntervals)
	// keeps none.
	maxHeldIntervals   = 100_000
	minSeriesIntervals = 60
)

// walker reads a JSON document token by token: only the token being read
// is buffered, never a whole value.
type walker struct{ dec *json.Decoder }

func newWalker(r io.Reader) *walker { return &walker{dec: json.NewDecoder(r)} }

// object reads the next value. When it is an object, f is called with
// each key and must read that key's value; isObject is then true.
// Anything else is skipped.
func (w *walker) object(f func(key string) error) (isObject bool, err error) {
	tok, err := w.dec.Token()
	if err != nil {
		return false, err
	}
	if tok != json.Delim('{') {
		return false, w.skipRest(tok)
	}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return true, err
		}
		key, ok := tok.(string)
		if !ok {
			return true, errors.New("an object key that is not a string")
		}
		if err := f(key); err != nil {
			return true, err
		}
	}
	_, err = w.dec.Token() // '}'
	return true, err
}

// skip reads the next value and forgets it.
func (w *walker) skip() error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	return w.skipRest(tok)
}

// skipRest reads the rest of the value tok began: up to its closing
// delimiter when tok opened an object or an array.
func (w *walker) skipRest(tok json.Token) error {
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// number reads the next value: ok when it is a number.
func (w *walker) number() (v float64, ok bool, err error) {
	tok, err := w.dec.Token()
	if err != nil {
		return 0, false, err
	}
	if v, ok := tok.(float64); ok {
		return v, true, nil
	}
	return 0, false, w.skipRest(tok)
}

// str reads the next value: ok when it is a string.
func (w *walker) str() (s string, ok bool, err error) {
	tok, err := w.dec.Token()
	if err != nil {
		return "", false, err
	}
	if s, ok := tok.(string); ok {
		return s, true, nil
	}
	return "", false, w.skipRest(tok)
}

// seriesMerger turns memtier's "Time-Serie" (keyed by the second from the
// start) into intervals as it is read: while there are more than limit
// of them, their width doubles and neighbours merge. A merged interval's
// count is the sum, its mean the count-weighted mean, its min and max the
// seconds' own, and its percentiles the highest of its seconds' (an upper
// bound: percentiles do not add up). With a limit below
// minSeriesIntervals it keeps nothing (dropped).
type seriesMerger struct {
	limit   int
	width   int // seconds per interval
	buckets map[int]*secondBucket
	dropped bool
}

// secondBucket is one interval being merged: its count and, when some
// second had them, latencies (have marks the Summary's figures that are
// set; meanWeight is the weight of meanSum).
type secondBucket struct {
	count      uint64
	counted    bool
	s          histo.Summary
	have       uint16
	meanSum    float64
	meanWeight float64
}

func newSeriesMerger(limit int) *seriesMerger {
	return &seriesMerger{limit: limit, width: 1, buckets: map[int]*secondBucket{}, dropped: limit < minSeriesIntervals}
}

// second reads the entry of second key (the walker is at its value).
func (m *seriesMerger) second(w *walker, key string) error {
	sec, err := strconv.Atoi(key)
	if err != nil || sec < 0 || sec >= 1e9 || m.dropped {
		return w.skip()
	}
	var b secondBucket
	weight := 1.0
	_, err = w.object(func(k string) error {
		v, ok, err := w.number()
		if !ok || err != nil || finite(k, v) != nil {
			return err
		}
		switch {
		case k == "Count":
			if v < 1<<63 {
				b.count, b.counted = uint64(v), true
			}
		case k == "Average Latency":
			b.meanSum, b.have = v, b.have|bit("mean")
		case k == "Min Latency":
			b.s.Min, b.have = v, b.have|bit("min")
		case k == "Max Latency":
			b.s.Max, b.have = v, b.have|bit("max")
		case strings.HasPrefix(k, "p"):
			p, err := strconv.ParseFloat(k[1:], 64)
			if name := report.PercentileMetric(p); err == nil && name != "" {
				*b.s.Field(name), b.have = v, b.have|bit(name)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Figures that fall with the rank are left out, as a figure that is
	// not a number is; so is a second that completed nothing.
	b.s.Mean = b.meanSum
	if b.have != 0 && (b.count == 0 || ordered(&b.s, func(name string) bool { return b.have&bit(name) != 0 }) != nil) {
		b.have, b.s = 0, histo.Summary{}
	}
	if b.have&bit("mean") != 0 {
		if b.counted && b.count > 0 {
			weight = float64(b.count)
		}
		b.meanSum, b.meanWeight = b.s.Mean*weight, weight
	} else {
		b.meanSum = 0
	}
	m.add(sec/m.width, &b)
	for len(m.buckets) > m.limit {
		m.widen()
	}
	return nil
}

// bit is the have mask's bit of a Summary figure.
func bit(name string) uint16 {
	return 1 << uint(slices.Index(summaryMetrics, name))
}

// add merges b into the interval k.
func (m *seriesMerger) add(k int, b *secondBucket) {
	into := m.buckets[k]
	if into == nil {
		c := *b
		m.buckets[k] = &c
		return
	}
	into.merge(b)
}

func (into *secondBucket) merge(b *secondBucket) {
	into.count += b.count
	into.counted = into.counted || b.counted
	into.meanSum += b.meanSum
	into.meanWeight += b.meanWeight
	for _, name := range summaryMetrics {
		if name == "mean" || b.have&bit(name) == 0 {
			continue
		}
		v, w := into.s.Field(name), *b.s.Field(name)
		switch {
		case into.have&bit(name) == 0:
			*v = w
		case name == "min":
			*v = min(*v, w)
		default: // max and the percentiles: the highest
			*v = max(*v, w)
		}
	}
	into.have |= b.have
}

// widen doubles the intervals' width, merging neighbours.
func (m *seriesMerger) widen() {
	old := m.buckets
	m.width *= 2
	m.buckets = make(map[int]*secondBucket, len(old)/2+1)
	for k, b := range old {
		m.add(k/2, b)
	}
}

// intervals returns the merged intervals in time order.
func (m *seriesMerger) intervals() []report.Interval {
	if m.dropped {
		return nil
	}
	keys := make([]int, 0, len(m.buckets))
	for k := range m.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]report.Interval, 0, len(keys))
	for _, k := range keys {
		b := m.buckets[k]
		iv := report.Interval{StartS: float64(k * m.width), DurationS: float64(m.width)}
		if b.counted {
			iv.Counts = scheduler.Counts{Completed: b.count, Sent: b.count, Scheduled: b.count}
		}
		if b.have != 0 && b.count > 0 {
			s := b.s
			if b.have&bit("mean") != 0 && b.meanWeight > 0 {
				s.Mean = b.meanSum / b.meanWeight
			}
			iv.ResponseMs = &s
		}
		out = append(out, iv)
	}
	return out
}
