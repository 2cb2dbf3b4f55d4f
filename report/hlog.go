package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// The HdrHistogram interval log of a result (--hdr-log) is built from the
// JSON document alone, so it can be written at the end of a run or from a
// saved result.
//
// Tags. A document with one test uses plain tags:
//
//	response            response time (open) or latency from the send (closed)
//	service             service time (open; the same as response in closed mode)
//	send_lag            send lag (open tests only)
//	receive_lag         receive lag: pacer's delay in reading a reply
//	hiccup              the host hiccup meter's lateness
//	response.<command>  response time of one command of a mix
//
// With several tests (bench runs its tests one after another, compare a
// closed loop and open loops), every tag carries the test's key and a
// colon: get:response, set:send_lag, mix:response.get. The key is the
// test's id (or, in results without one, its name in lower case with
// every run of other characters than a-z, 0-9, - and _ turned into one _);
// where two tests would share a key, both take the form from their names
// (compare: get_closed_loop, get_open_loop_at_5k_req_s); a key still
// shared, or empty ("test"), gets _<position> (1-based) appended where
// another test has the same.
//
// Times. StartTime and BaseTime are the first test's start; each line's
// timestamp is its interval's start (the test's started_at plus start_s)
// in seconds from it. A test without started_at (an older result) is taken
// to start when the one before it ended (the first at the document's
// started_at). A test or command without intervals (an older result)
// gets one line spanning its whole window with its total histograms.

// TestKeys returns the key of each test of d (see above), in order.
func TestKeys(d *Document) []string {
	keys := make([]string, len(d.Tests))
	fromName := make([]bool, len(d.Tests))
	for i, t := range d.Tests {
		keys[i] = testSlug(t.ID)
		if keys[i] == "" {
			keys[i], fromName[i] = testSlug(t.Name), true
		}
	}
	count := func() map[string]int {
		m := map[string]int{}
		for _, k := range keys {
			m[k]++
		}
		return m
	}
	seen := count()
	for i, t := range d.Tests {
		if seen[keys[i]] > 1 && !fromName[i] {
			keys[i] = testSlug(t.Name)
		}
	}
	for i := range keys {
		if keys[i] == "" {
			keys[i] = "test"
		}
	}
	seen = count()
	for i := range keys {
		if seen[keys[i]] > 1 {
			keys[i] += "_" + strconv.Itoa(i+1)
		}
	}
	return keys
}

// testSlug lowers s and turns every run of characters other than a-z, 0-9,
// - and _ into one _, trimmed at both ends.
func testSlug(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}

// testStarts returns the wall-clock start of each test of d.
func testStarts(d *Document) ([]time.Time, error) {
	var next time.Time
	if d.StartedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, d.StartedAt)
		if err != nil {
			return nil, fmt.Errorf("started_at %q: not an RFC 3339 time", d.StartedAt)
		}
		next = t
	}
	out := make([]time.Time, len(d.Tests))
	for i, t := range d.Tests {
		if t.StartedAt != "" {
			s, err := time.Parse(time.RFC3339Nano, t.StartedAt)
			if err != nil {
				return nil, fmt.Errorf("tests[%d].started_at %q: not an RFC 3339 time", i, t.StartedAt)
			}
			out[i] = s
		} else {
			out[i] = next
		}
		next = out[i].Add(seconds(t.DurationS))
	}
	return out, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// maxNs is a summary's max in nanoseconds (the JSON keeps ns/10^6, which
// converts back exactly), or 0 when there is no summary: WriteLog then
// reads the max from the histogram.
func maxNs(s *histo.Summary) int64 {
	if s == nil {
		return 0
	}
	return int64(math.Round(s.Max * 1e6))
}

// HdrLog builds the interval log of d: tags, times and lines as described
// above, in time order (for each interval: response, service, send_lag,
// then each command's response by name).
func HdrLog(d *Document) (histo.Log, error) {
	starts, err := testStarts(d)
	if err != nil {
		return histo.Log{}, err
	}
	l := histo.Log{Comment: "Logged with " + d.Tool.Name + " " + d.Tool.Version}
	if d.Tool.Name == "" {
		l.Comment = "Logged with pacer"
	}
	if len(starts) > 0 {
		l.Start = starts[0]
		for _, s := range starts {
			if s.Before(l.Start) {
				l.Start = s
			}
		}
	} else if d.StartedAt != "" {
		l.Start, _ = time.Parse(time.RFC3339Nano, d.StartedAt)
	}
	keys := TestKeys(d)
	for i, t := range d.Tests {
		s := logSeries{start: starts[i], duration: seconds(t.DurationS)}
		if len(d.Tests) > 1 {
			s.prefix = histo.LogTag(keys[i]) + ":"
		}
		whole := Interval{DurationS: t.DurationS, Latencies: t.Latencies}
		response, service := "response", "service"
		if t.Messages != nil { // a pubsub or stream test's latencies are its deliveries'
			response, service = "delivery", "delivery_service"
		}
		s.add(response, t.Intervals, whole, seriesResponse)
		s.add(service, t.Intervals, whole, seriesService)
		if t.Mode == "open" || t.Histograms.SendLag != nil {
			s.add("send_lag", t.Intervals, whole, seriesLag)
		}
		if t.Histograms.ReceiveLag != nil {
			s.add("receive_lag", t.Intervals, whole, seriesReceive)
		}
		if t.Histograms.Hiccup != nil {
			s.add("hiccup", t.Intervals, whole, seriesHiccup)
		}
		for _, name := range slices.Sorted(maps.Keys(t.Commands)) {
			c := t.Commands[name]
			if c.Histograms.Response == "" && len(c.Intervals) == 0 {
				continue // a mix too large to time each command
			}
			whole := Interval{DurationS: t.DurationS, Latencies: Latencies{ResponseMs: c.ResponseMs, Histograms: c.Histograms}}
			s.add("response."+histo.LogTag(name), c.Intervals, whole, seriesResponse)
		}
		// Time order; within an interval, the order of the series above.
		sort.SliceStable(s.entries, func(a, b int) bool { return s.entries[a].Start.Before(s.entries[b].Start) })
		l.Entries = append(l.Entries, s.entries...)
	}
	return l, nil
}

// series says which histogram of an interval a tag logs.
type series int

const (
	seriesResponse series = iota
	seriesService
	seriesLag
	seriesReceive
	seriesHiccup
)

// of returns the series' encoded histogram in iv and its summary (nil
// when iv has none); ok is false when iv lacks the series (no send lag in
// closed mode).
func (s series) of(iv Interval) (enc string, sum *histo.Summary, ok bool) {
	switch s {
	case seriesResponse:
		return iv.Histograms.Response, iv.ResponseMs, true
	case seriesService:
		return iv.Histograms.Service, iv.ServiceMs, true
	}
	p, sum := iv.Histograms.SendLag, iv.SendLagMs
	switch s {
	case seriesReceive:
		p, sum = iv.Histograms.ReceiveLag, iv.ReceiveLagMs
	case seriesHiccup:
		p, sum = iv.Histograms.Hiccup, iv.HiccupMs
	}
	if p == nil {
		return "", nil, false
	}
	return *p, sum, true
}

// logSeries collects the log lines of one test.
type logSeries struct {
	prefix   string
	start    time.Time
	duration time.Duration
	entries  []histo.LogEntry
}

// add appends a line per interval of ivs for tag, or, when the test has
// no intervals, one line spanning the test from whole (its totals). The
// summary's max, when there is one, fills the line's max column.
func (s *logSeries) add(tag string, ivs []Interval, whole Interval, which series) {
	if len(ivs) == 0 {
		if enc, sum, ok := which.of(whole); ok && enc != "" {
			s.entries = append(s.entries, histo.LogEntry{Tag: s.prefix + tag, Start: s.start, Duration: s.duration, Encoded: enc, Max: maxNs(sum)})
		}
		return
	}
	for _, iv := range ivs {
		if enc, sum, ok := which.of(iv); ok {
			s.entries = append(s.entries, histo.LogEntry{Tag: s.prefix + tag, Start: s.start.Add(seconds(iv.StartS)),
				Duration: seconds(iv.DurationS), Encoded: enc, Max: maxNs(sum)})
		}
	}
}

// writeHdrLog writes the interval log of d to w (see HdrLog).
func writeHdrLog(w io.Writer, d *Document) error {
	l, err := HdrLog(d)
	if err != nil {
		return fmt.Errorf("interval log: %w", err)
	}
	return histo.WriteLog(w, l)
}
