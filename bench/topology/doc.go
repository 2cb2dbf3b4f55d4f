package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
)

// doc is the part of a pacer.result/v1 document the scenarios read.
type doc struct {
	Tests []test `json:"tests"`
}

type counts struct {
	Scheduled, Sent, Completed, Errors, Timeouts, Unsent uint64
}

// exact reports whether every scheduled request is accounted for.
func (c counts) exact() bool { return c.Scheduled == c.Completed+c.Errors+c.Timeouts+c.Unsent }

func (c counts) String() string {
	return fmt.Sprintf("scheduled %d = completed %d + errors %d + timeouts %d + unsent %d", c.Scheduled, c.Completed, c.Errors, c.Timeouts, c.Unsent)
}

type summary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

type histograms struct {
	Response string `json:"response"`
}

type interval struct {
	StartS     float64    `json:"start_s"`
	DurationS  float64    `json:"duration_s"`
	Completed  uint64     `json:"completed"`
	ResponseMs *summary   `json:"response_ms"`
	Histograms histograms `json:"histograms"`
	Events     []int      `json:"events"`
}

type node struct {
	Addr      string     `json:"addr"`
	Role      string     `json:"role"`
	Slots     int        `json:"slots"`
	Sent      uint64     `json:"sent"`
	Completed uint64     `json:"completed"`
	Errors    uint64     `json:"errors"`
	Timeouts  uint64     `json:"timeouts"`
	Unsent    uint64     `json:"unsent"`
	Moved     uint64     `json:"moved"`
	Ask       uint64     `json:"ask"`
	Response  *summary   `json:"response"`
	Intervals []interval `json:"intervals"`
}

type visReplica struct {
	Addr         string   `json:"addr"`
	Seen         uint64   `json:"seen"`
	Lost         uint64   `json:"lost"`
	Polls        uint64   `json:"polls"`
	VisibilityMs *summary `json:"visibility_ms"`
	Intervals    []struct {
		StartS       float64  `json:"start_s"`
		DurationS    float64  `json:"duration_s"`
		VisibilityMs *summary `json:"visibility_ms"`
	} `json:"intervals"`
}

type test struct {
	ID              string         `json:"id"`
	StartedAt       string         `json:"started_at"`
	DurationS       float64        `json:"duration_s"`
	Verdict         string         `json:"verdict"`
	Counts          counts         `json:"counts"`
	ResponseMs      *summary       `json:"response_ms"`
	Connections     int            `json:"connections"`
	ConnectionsLost uint64         `json:"connections_lost"`
	Reconnects      uint64         `json:"reconnects"`
	Events          []report.Event `json:"events"`
	EventBoundMs    float64        `json:"event_bound_ms"`
	Intervals       []interval     `json:"intervals"`
	Nodes           []node         `json:"nodes"`
	Host            *struct {
		BusyPct  float64 `json:"busy_pct"`
		StealPct float64 `json:"steal_pct"`
	} `json:"host"`
	Visibility *struct {
		Probes   uint64       `json:"probes"`
		Replicas []visReplica `json:"replicas"`
	} `json:"visibility"`
}

// readDoc reads a result document.
func readDoc(path string) (*doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(d.Tests) == 0 {
		return nil, fmt.Errorf("%s: no tests", path)
	}
	return &d, nil
}

// start is the wall-clock instant of the test's timeline origin.
func (t *test) start() (time.Time, error) {
	return time.Parse(time.RFC3339Nano, t.StartedAt)
}

// node returns the row of addr, nil when there is none.
func (t *test) node(addr string) *node {
	for i := range t.Nodes {
		if t.Nodes[i].Addr == addr {
			return &t.Nodes[i]
		}
	}
	return nil
}

// windows are the spans [start, end] of every event's write and read
// windows (an empty window is its instant).
func (t *test) windows() [][2]float64 {
	var w [][2]float64
	for _, e := range t.Events {
		for _, x := range []*report.EventWindow{e.Write, e.Read} {
			if x != nil {
				w = append(w, [2]float64{x.StartS, x.EndS})
			}
		}
	}
	return w
}

// overlaps reports whether the interval [iv.start, iv.start+duration)
// meets any of the spans.
func overlaps(iv interval, spans [][2]float64) bool {
	for _, s := range spans {
		if s[0] < iv.StartS+iv.DurationS && s[1] >= iv.StartS {
			return true
		}
	}
	return false
}

// pool merges the response histograms of the intervals keep selects.
func pool(ivs []interval, keep func(interval) bool) (*hdrhistogram.Histogram, int, error) {
	h := histo.New()
	n := 0
	for _, iv := range ivs {
		if !keep(iv) || iv.Histograms.Response == "" {
			continue
		}
		x, err := histo.Decode(iv.Histograms.Response)
		if err != nil {
			return nil, 0, err
		}
		h.Merge(x)
		n++
	}
	return h, n, nil
}

// ms is the histogram's value at percentile p in ms, as pacer computes it.
func ms(h *hdrhistogram.Histogram, p float64) float64 {
	return float64(histo.CValueAtPercentile(h, p)) / 1e6
}

// pct is (a/b − 1) in percent.
func pct(a, b float64) float64 { return 100 * (a/b - 1) }

// verdict is PASS or MISS.
func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// tally holds every acceptance line's outcome, for the summary; scenario
// names the scenario under way.
var (
	tally        []string
	scenarioName string
)

// judge prints an acceptance line's figures and its verdict, and keeps it
// for the summary.
func judge(line string, ok bool) {
	v := verdict(ok)
	fmt.Printf("  %s: %s\n", line, v)
	tally = append(tally, fmt.Sprintf("%s  %-13s %s", v, scenarioName, line))
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// eventLine is an event in one line: kind, instant, nodes, windows.
func eventLine(i int, e report.Event) string {
	win := func(w *report.EventWindow) string {
		if w == nil {
			return "none sent"
		}
		s := fmt.Sprintf("%.3f–%.3f s (%.3f s, %d failed, spike %.1f ms)", w.StartS, w.EndS, w.UnavailableS, w.Failed, w.SpikeMs)
		if w.Open {
			s += " open"
		}
		return s
	}
	slots := 0
	for _, r := range e.Slots {
		slots += int(r[1]) - int(r[0]) + 1
	}
	s := fmt.Sprintf("#%d %-12s at %.3f s, nodes %s", i, e.Kind, e.AtS, strings.Join(e.Nodes, " "))
	if slots > 0 {
		s += fmt.Sprintf(", %d slots", slots)
	}
	if len(e.Errors) > 0 {
		var parts []string
		for _, k := range sortedKeys(e.Errors) {
			parts = append(parts, fmt.Sprintf("%s %d", k, e.Errors[k]))
		}
		s += ", " + strings.Join(parts, ", ")
	}
	return s + "\n        writes " + win(e.Write) + "; reads " + win(e.Read)
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// loadAverage is the 1-, 5- and 15-minute load averages (/proc/loadavg).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// slotCount is how many slots the ranges hold.
func slotCount(r [][2]uint16) int {
	n := 0
	for _, x := range r {
		n += int(x[1]) - int(x[0]) + 1
	}
	return n
}

// hostLine is the host's CPU over the test: busy and stolen by the
// hypervisor, the noise a run's p99 carries.
func (t *test) hostLine() string {
	if t.Host == nil {
		return "host -"
	}
	return fmt.Sprintf("host busy %.0f%%, steal %.1f%%", t.Host.BusyPct, t.Host.StealPct)
}
