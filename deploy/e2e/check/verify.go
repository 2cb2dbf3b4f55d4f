package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// doc is what check reads of a pacer.result/v1 document.
type doc struct {
	path    string
	Schema  string `json:"schema"`
	Shard   *shard `json:"shard"`
	StartAt string `json:"start_at"`
	Config  config `json:"config"`
	Tests   []test `json:"tests"`
}

type shard struct {
	K      int   `json:"k"`
	N      int   `json:"n"`
	Merged []int `json:"merged"`
}

type config struct {
	Rate    *float64 `json:"rate"`
	Arrival string   `json:"arrival"`
}

type interval struct {
	Start    float64            `json:"start_s"`
	Duration float64            `json:"duration_s"`
	SendLag  map[string]float64 `json:"send_lag_ms"`
}

type test struct {
	ID          string             `json:"id"`
	StartedAt   string             `json:"started_at"`
	FirstSendMs *float64           `json:"first_send_ms"`
	Counts      map[string]uint64  `json:"counts"`
	Response    map[string]float64 `json:"response_ms"`
	SendLag     map[string]float64 `json:"send_lag_ms"`
	RecvLag     map[string]float64 `json:"receive_lag_ms"`
	Verdict     string             `json:"verdict"`
	Hist        struct {
		Response string `json:"response"`
	} `json:"histograms"`
	Intervals []interval `json:"intervals"`
}

func readDoc(path string) (doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return doc{}, err
	}
	d := doc{path: path}
	if err := json.Unmarshal(b, &d); err != nil {
		return doc{}, fmt.Errorf("%s: %w", path, err)
	}
	if d.Schema != "pacer.result/v1" || len(d.Tests) != 1 {
		return doc{}, fmt.Errorf("%s: want a pacer.result/v1 document of one test", path)
	}
	return d, nil
}

// readMonitor reads "INDEX UNIX_SECONDS" lines: the completion index and
// the instant the server received that pod's first request.
func readMonitor(path string) (map[int]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s: %q: want INDEX UNIX_SECONDS", path, sc.Text())
		}
		k, err1 := strconv.Atoi(fields[0])
		t, err2 := strconv.ParseFloat(fields[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: %q: want INDEX UNIX_SECONDS", path, sc.Text())
		}
		out[k] = t
	}
	return out, sc.Err()
}

type limits struct {
	requests  uint64
	firstSend time.Duration
	arrivals  map[int]float64 // by completion index
}

type verdict struct {
	table    string
	failures []string
}

// verify holds the merged document m and the shards to lim.
func verify(m doc, shards []doc, lim limits) (verdict, error) {
	var v verdict
	var b strings.Builder
	start, err := time.Parse(time.RFC3339Nano, m.StartAt)
	if err != nil {
		return v, fmt.Errorf("%s: start_at %q: %v", m.path, m.StartAt, err)
	}
	fmt.Fprintf(&b, "start_at %s\n", m.StartAt)
	fmt.Fprintf(&b, "each shard's first request, in ms after start_at: due (its offset in the timeline), sent (first_send_ms),\n")
	fmt.Fprintf(&b, "sent by (due + a bound on its send lag), the server got it (redis MONITOR)\n")
	fmt.Fprintf(&b, "%-6s %10s %10s %10s %10s %12s %12s %s\n", "shard", "scheduled", "completed", "due", "sent", "sent by", "server got", "verdict")
	var sum *hdrhistogram.Histogram
	sums := map[string]uint64{}
	for _, s := range shards {
		if s.Shard == nil || s.Shard.K < 1 {
			return v, fmt.Errorf("%s: not a shard's result", s.path)
		}
		if s.StartAt != m.StartAt {
			v.failures = append(v.failures, fmt.Sprintf("shard %d/%d starts at %s, the merge at %s", s.Shard.K, s.Shard.N, s.StartAt, m.StartAt))
		}
		t := s.Tests[0]
		for k, n := range t.Counts {
			sums[k] += n
		}
		h, err := hdrhistogram.Decode([]byte(t.Hist.Response))
		if err != nil {
			return v, fmt.Errorf("%s: response histogram: %v", s.path, err)
		}
		if sum == nil {
			sum = hdrhistogram.Import(h.Export())
		} else if dropped := sum.Merge(h); dropped != 0 {
			return v, fmt.Errorf("%s: %d values did not fit the sum's histogram", s.path, dropped)
		}
		fs := firstSendOf(t, s)
		due, sent, byLag, server := "n/a", "n/a", "n/a", "n/a"
		if fs.hasDue {
			due = fmt.Sprintf("%.3f", fs.due)
		}
		if fs.hasSent {
			sent = fmt.Sprintf("%.3f", fs.sent)
		}
		if fs.hasLag {
			byLag = fmt.Sprintf("%.3f", fs.byLag)
		}
		if lim.firstSend > 0 {
			switch bound, ok := fs.bound(); {
			case !ok:
				v.failures = append(v.failures, fmt.Sprintf("shard %d/%d: nothing in its document bounds its first send", s.Shard.K, s.Shard.N))
			case bound > msOf(lim.firstSend) || bound < 0:
				v.failures = append(v.failures, fmt.Sprintf("shard %d/%d: first send %.3f ms after start_at, not within %s", s.Shard.K, s.Shard.N, bound, lim.firstSend))
			}
		}
		if lim.arrivals != nil {
			at, ok := lim.arrivals[s.Shard.K-1]
			switch {
			case !ok:
				v.failures = append(v.failures, fmt.Sprintf("shard %d/%d: the server saw no request of it", s.Shard.K, s.Shard.N))
			default:
				ms := (at - float64(start.UnixNano())/1e9) * 1e3
				server = fmt.Sprintf("%.3f", ms)
				if ms < -0.001 || (lim.firstSend > 0 && ms > msOf(lim.firstSend)) {
					v.failures = append(v.failures, fmt.Sprintf("shard %d/%d: the server got its first request %.3f ms after start_at", s.Shard.K, s.Shard.N, ms))
				}
			}
		}
		fmt.Fprintf(&b, "%d/%-4d %10d %10d %10s %10s %12s %12s %s\n", s.Shard.K, s.Shard.N, t.Counts["scheduled"], t.Counts["completed"], due, sent, byLag, server, t.Verdict)
	}
	mt := m.Tests[0]
	fmt.Fprintf(&b, "%-6s %10d %10d %10s %10s %12s %12s %s\n", "merged", mt.Counts["scheduled"], mt.Counts["completed"], "", "", "", "", mt.Verdict)
	for k, n := range sums {
		if mt.Counts[k] != n {
			v.failures = append(v.failures, fmt.Sprintf("merged %s %d, the shards' sum %d", k, mt.Counts[k], n))
		}
	}
	if lim.requests > 0 && (mt.Counts["scheduled"] != lim.requests || mt.Counts["completed"] != lim.requests) {
		v.failures = append(v.failures, fmt.Sprintf("merged scheduled %d, completed %d; want both %d", mt.Counts["scheduled"], mt.Counts["completed"], lim.requests))
	}
	mh, err := hdrhistogram.Decode([]byte(mt.Hist.Response))
	if err != nil {
		return v, fmt.Errorf("%s: response histogram: %v", m.path, err)
	}
	if sum == nil {
		return v, errors.New("no shard")
	}
	fmt.Fprintf(&b, "response     %12s %12s %12s %12s\n", "count", "p99 ms", "p99.9 ms", "max ms")
	fmt.Fprintf(&b, "  merged     %12d %12.6f %12.6f %12.6f   (the merged document's figures)\n", mh.TotalCount(), mt.Response["p99"], mt.Response["p99.9"], mt.Response["max"])
	added := []float64{millis(sum.ValueAtQuantile(99)), millis(sum.ValueAtQuantile(99.9)), millis(sum.Max())}
	fmt.Fprintf(&b, "  added      %12d %12.6f %12.6f %12.6f   (the shards' histograms added here)\n", sum.TotalCount(), added[0], added[1], added[2])
	if mh.TotalCount() != sum.TotalCount() {
		v.failures = append(v.failures, fmt.Sprintf("merged histogram holds %d responses, the shards' %d", mh.TotalCount(), sum.TotalCount()))
	}
	for i, name := range []string{"p99", "p99.9", "max"} {
		if got := mt.Response[name]; got != added[i] {
			v.failures = append(v.failures, fmt.Sprintf("merged response %s %v ms, the shards' histograms added %v ms", name, got, added[i]))
		}
	}
	v.table = b.String()
	return v, nil
}

// firstSend is what a shard's document says of its first send, in ms
// after start_at: first_send_ms, when the document has it (pacer writes
// it since it ran on a real cluster); and, from any document, a bound:
// the first request (the timeline's index K−1, due at its offset) went out
// its send lag after it was due, and the first interval's largest send lag
// bounds that lag when the request's reply was surely read within the
// first interval (a sample belongs to the interval its reply was read in:
// the offset plus the test's largest response time and receive lag end
// before the interval does), the test's largest otherwise.
type firstSend struct {
	due, sent, byLag        float64
	hasDue, hasSent, hasLag bool
}

// bound is the first send itself if the document has it, else the bound.
func (f firstSend) bound() (float64, bool) {
	switch {
	case f.hasSent:
		return f.sent, true
	case f.hasLag:
		return f.byLag, true
	}
	return 0, false
}

func firstSendOf(t test, s doc) firstSend {
	var f firstSend
	if t.FirstSendMs != nil {
		// first_send_ms counts from the test's started_at: a shard's start
		// instant, unless the test is not its first.
		testStart, err1 := time.Parse(time.RFC3339Nano, t.StartedAt)
		start, err2 := time.Parse(time.RFC3339Nano, s.StartAt)
		if err1 == nil && err2 == nil {
			f.sent, f.hasSent = *t.FirstSendMs+float64(testStart.Sub(start))/1e6, true
		}
	}
	if s.Config.Arrival != "uniform" || s.Config.Rate == nil || *s.Config.Rate <= 0 || s.Shard == nil {
		return f
	}
	f.due, f.hasDue = float64(s.Shard.K-1) / *s.Config.Rate * 1e3, true
	lag, ok := t.SendLag["max"]
	if !ok {
		return f
	}
	if len(t.Intervals) > 0 {
		iv := t.Intervals[0]
		if first, ok := iv.SendLag["max"]; ok && iv.Start == 0 && f.due+t.Response["max"]+t.RecvLag["max"] < iv.Duration*1e3 {
			lag = first
		}
	}
	f.byLag, f.hasLag = f.due+lag, true
	return f
}

func millis(ns int64) float64 { return float64(ns) / 1e6 }

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
