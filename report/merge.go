package report

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// MergeOptions tune Merge.
type MergeOptions struct {
	// Partial merges the shards there are when some are missing; without
	// it a missing shard is refused.
	Partial bool
	// Tool is the program writing the merged document.
	Tool Tool
}

// ErrMerge marks a refusal to merge: documents that are not shards of one
// timeline.
var ErrMerge = errors.New("cannot merge")

// MergeInput is one shard's document and the name to call it by.
type MergeInput struct {
	Label string
	Doc   *Document
}

// mergedConfig are the config entries every shard of one timeline shares:
// the workload and the timeline. connections, pacing and the like may
// differ between machines; the target may not (unless each shard ran its
// own embedded target).
var mergedConfig = []string{
	"tests", "rate", "stages", "arrival", "seed_str", "duration_s", "requests", "warmup_s",
	"keyspace", "key_dist", "data_size", "command", "embedded", "cluster",
}

// Merge adds the results of the shards of one timeline (--shard K/N, each
// with the same workload, timeline and start) into one document, exactly:
// counts, bytes and errors are summed, histograms added (so every
// percentile is that of all requests), intervals with the same start
// merged, rates taken over the union of the windows, and every summary
// and verdict computed again from the sums; a cluster's nodes are merged
// the same way (see mergeNodes). It refuses (an error wrapping ErrMerge)
// documents that are not shards of one timeline, and a missing shard
// unless opt.Partial. The per-shard SLO verdicts and server
// counters are not carried over.
func Merge(in []MergeInput, opt MergeOptions) (*Document, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: no documents", ErrMerge)
	}
	ks, err := checkShards(in, opt.Partial)
	if err != nil {
		return nil, err
	}
	first := in[0].Doc
	out := &Document{
		Schema: Schema, Mode: first.Mode, Tool: opt.Tool,
		StartedAt: first.StartedAt, Config: map[string]any{},
		Server: first.Server, StartAt: first.StartAt,
		Shard: &Shard{N: first.Shard.N, Merged: ks},
	}
	conns := 0.0
	for _, s := range in {
		if s.Doc.StartedAt < out.StartedAt {
			out.StartedAt = s.Doc.StartedAt
		}
		out.Interrupted = out.Interrupted || s.Doc.Interrupted
		if c, ok := s.Doc.Config["connections"].(float64); ok {
			conns += c
		}
	}
	for k, v := range first.Config {
		out.Config[k] = v
	}
	if _, ok := first.Config["connections"]; ok {
		out.Config["connections"] = conns
	}
	for i := range first.Tests {
		parts := make([]Test, len(in))
		for j, s := range in {
			parts[j] = s.Doc.Tests[i]
		}
		t, err := mergeTest(parts, in, first.Config)
		if err != nil {
			return nil, err
		}
		out.Tests = append(out.Tests, t)
	}
	if out.Tests == nil {
		out.Tests = []Test{}
	}
	return out, nil
}

// checkShards refuses documents that are not distinct shards of one
// timeline and returns their K's, in order.
func checkShards(in []MergeInput, partial bool) ([]int, error) {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMerge, fmt.Sprintf(format, args...))
	}
	first := in[0]
	seen := map[int]string{}
	var ks []int
	for _, s := range in {
		switch d := s.Doc; {
		case d.Shard == nil:
			return nil, refuse("%s is not a shard's result (run with --shard K/N)", s.Label)
		case d.Shard.K == 0:
			return nil, refuse("%s is already a merged result", s.Label)
		case d.Mode != "open":
			return nil, refuse("%s: only open-model results (pacer run) are split into shards", s.Label)
		}
	}
	for _, s := range in {
		d := s.Doc
		switch {
		case d.Shard.N != first.Doc.Shard.N:
			return nil, refuse("%s is shard %d/%d, %s shard %d/%d: not the same split", first.Label, first.Doc.Shard.K, first.Doc.Shard.N, s.Label, d.Shard.K, d.Shard.N)
		case seen[d.Shard.K] != "":
			return nil, refuse("%s and %s are both shard %d/%d", seen[d.Shard.K], s.Label, d.Shard.K, d.Shard.N)
		case d.StartAt != first.Doc.StartAt:
			return nil, refuse("%s starts at %s, %s at %s: give every shard the same --start-at", first.Label, orNone(first.Doc.StartAt), s.Label, orNone(d.StartAt))
		case len(d.Tests) != len(first.Doc.Tests):
			return nil, refuse("%s holds %d tests, %s %d", first.Label, len(first.Doc.Tests), s.Label, len(d.Tests))
		}
		seen[d.Shard.K] = s.Label
		ks = append(ks, d.Shard.K)
		if err := sameConfig(first, s); err != nil {
			return nil, refuse("%v", err)
		}
		for i := range d.Tests {
			if err := sameTimeline(first, s, i); err != nil {
				return nil, refuse("%v", err)
			}
		}
	}
	sort.Ints(ks)
	if n := first.Doc.Shard.N; len(ks) < n && !partial {
		var missing []string
		for k := 1; k <= n; k++ {
			if seen[k] == "" {
				missing = append(missing, strconv.Itoa(k))
			}
		}
		return nil, refuse("shard %s of %d missing (--partial merges the shards given)", strings.Join(missing, ", "), n)
	}
	return ks, nil
}

func orNone(s string) string {
	if s == "" {
		return "no fixed time"
	}
	return s
}

// sameConfig checks that two shards ran the same workload and timeline.
func sameConfig(a, b MergeInput) error {
	keys := mergedConfig
	_, embA := a.Doc.Config["embedded"]
	_, embB := b.Doc.Config["embedded"]
	if !embA && !embB {
		keys = append(slices.Clip(keys), "target")
	}
	for _, k := range keys {
		va, vb := a.Doc.Config[k], b.Doc.Config[k]
		if !reflect.DeepEqual(va, vb) {
			return fmt.Errorf("%s and %s differ in %s: %s and %s", a.Label, b.Label, k, show(va), show(vb))
		}
	}
	return nil
}

// sameTimeline checks that test i of two shards is the same test on the
// same timeline.
func sameTimeline(a, b MergeInput, i int) error {
	ta, tb := a.Doc.Tests[i], b.Doc.Tests[i]
	type field struct {
		name   string
		va, vb any
	}
	for _, f := range []field{
		{"test", ta.ID + " " + ta.Name, tb.ID + " " + tb.Name},
		{"mode", ta.Mode, tb.Mode},
		{"arrival", ta.Arrival, tb.Arrival},
		{"interval_s", ta.IntervalS, tb.IntervalS},
		{"stages", ta.Stages, tb.Stages},
		{"warmup_s", ta.WarmupS, tb.WarmupS},
		{"commands", commandNames(ta), commandNames(tb)},
	} {
		if !reflect.DeepEqual(f.va, f.vb) {
			return fmt.Errorf("test %d: %s and %s differ in %s: %s and %s", i+1, a.Label, b.Label, f.name, show(f.va), show(f.vb))
		}
	}
	// With a fixed start every shard's test starts at one planned instant.
	if a.Doc.StartAt != "" && ta.StartedAt != tb.StartedAt {
		return fmt.Errorf("test %d: %s started at %s, %s at %s", i+1, a.Label, ta.StartedAt, b.Label, tb.StartedAt)
	}
	return nil
}

func commandNames(t Test) []string {
	var names []string
	for n := range t.Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func show(v any) string {
	if v == nil {
		return "none"
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// mergeTest adds test i of every shard.
func mergeTest(parts []Test, in []MergeInput, config map[string]any) (Test, error) {
	f := parts[0]
	t := Test{
		ID: f.ID, Name: f.Name, StartedAt: f.StartedAt, Mode: f.Mode, Arrival: f.Arrival, Pacing: f.Pacing,
		IntervalS: f.IntervalS, Stages: f.Stages, WarmupS: f.WarmupS, Errors: map[string]uint64{},
		PacingQuantumUs: f.PacingQuantumUs,
	}
	var lagLimit float64
	var warm scheduler.Counts
	hasWarm := false
	for _, p := range parts {
		if p.StartedAt != "" && (t.StartedAt == "" || p.StartedAt < t.StartedAt) {
			t.StartedAt = p.StartedAt
		}
		t.DurationS = math.Max(t.DurationS, p.DurationS)
		t.Counts.Add(p.Counts)
		addCodes(t.Errors, p.Errors)
		if t.FirstError == "" {
			t.FirstError = p.FirstError
		}
		t.Connections += p.Connections
		t.Interrupted = t.Interrupted || p.Interrupted
		t.ConnectionsLost += p.ConnectionsLost
		t.Reconnects += p.Reconnects
		t.DroppedBacklog += p.DroppedBacklog
		t.BlockedS = round(t.BlockedS+p.BlockedS, 3)
		t.Unsolicited += p.Unsolicited
		t.HeldSent += p.HeldSent
		t.HeldUnsent += p.HeldUnsent
		t.BytesSent += p.BytesSent
		t.BytesReceived += p.BytesReceived
		if p.LagLimitMs != nil {
			lagLimit = math.Max(lagLimit, *p.LagLimitMs)
		}
		if p.WarmupCounts != nil {
			warm.Add(*p.WarmupCounts)
			hasWarm = true
		}
	}
	if hasWarm {
		t.WarmupCounts = &warm
	}
	if lagLimit > 0 {
		t.LagLimitMs = &lagLimit
	}
	if w := t.DurationS; w > 0 {
		t.AchievedRate = round(float64(t.Counts.Completed)/w, 3)
		t.BytesSentPerS = round(float64(t.BytesSent)/w, 3)
		t.BytesReceivedPerS = round(float64(t.BytesReceived)/w, 3)
	}
	t.TargetRate = mergedTarget(parts, config)
	hs := make([]Histograms, len(parts))
	for i, p := range parts {
		hs[i] = p.Histograms
	}
	var err error
	if t.Latencies, err = mergeLatencies(hs); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	if t.Intervals, err = mergeIntervals(parts, func(p Test) []Interval { return p.Intervals }); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	if t.Nodes, err = mergeNodes(parts, in); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	for _, name := range commandNames(f) {
		c := Command{Errors: map[string]uint64{}}
		for i, p := range parts {
			pc := p.Commands[name]
			c.Counts.Add(pc.Counts)
			addCodes(c.Errors, pc.Errors)
			hs[i] = pc.Histograms
		}
		if c.Latencies, err = mergeLatencies(hs); err != nil {
			return t, fmt.Errorf("test %s, command %s: %w", f.ID, name, err)
		}
		if c.Intervals, err = mergeIntervals(parts, func(p Test) []Interval { return p.Commands[name].Intervals }); err != nil {
			return t, fmt.Errorf("test %s, command %s: %w", f.ID, name, err)
		}
		if t.Commands == nil {
			t.Commands = map[string]Command{}
		}
		t.Commands[name] = c
	}
	// The verdict, from the sums; a shard that lost its target loses the
	// merged test's.
	for i, p := range parts {
		if p.Verdict == VerdictTargetLost {
			t.Verdict, t.VerdictReason = p.Verdict, fmt.Sprintf("%s: %s", in[i].Label, p.VerdictReason)
			return t, nil
		}
	}
	if _, err := t.figures(); err != nil {
		return t, err
	}
	j := Judge(&t)
	t.Verdict, t.VerdictReason = j.Verdict, j.Reason
	return t, nil
}

// mergeNodes adds the shards' per-node results (a Redis Cluster's
// primaries): a node of one shard is a node of another when their addr is
// the same and so is their id, where both have one. Counts, connections
// and redirects are summed and response histograms added; slots are as
// the first shard listing the node saw them at its start. A node only
// some shards list is kept with what they counted, in the order the
// shards list them. A node with a response summary but no histogram
// (written before nodes carried one) cannot be merged exactly: refused,
// an error wrapping ErrMerge.
func mergeNodes(parts []Test, in []MergeInput) ([]Node, error) {
	var out []Node
	var hs [][3][]*hdrhistogram.Histogram // response, service, receive lag
	for i, p := range parts {
		for _, n := range p.Nodes {
			if n.ResponseMs != nil && n.Histograms.Response == "" {
				return nil, fmt.Errorf("%w: %s: node %s has response times but no histogram (written by an older pacer): they cannot be merged exactly",
					ErrMerge, in[i].Label, strconv.Quote(n.Addr))
			}
			h, err := n.decode()
			if err != nil {
				return nil, fmt.Errorf("%s: node %s: %w", in[i].Label, strconv.Quote(n.Addr), err)
			}
			k := slices.IndexFunc(out, func(m Node) bool { return sameNode(m, n) })
			if k < 0 {
				out = append(out, Node{Addr: n.Addr, ID: n.ID, Slots: n.Slots})
				hs = append(hs, [3][]*hdrhistogram.Histogram{})
				k = len(out) - 1
			}
			m := &out[k]
			if m.ID == "" {
				m.ID = n.ID
			}
			m.Connections += n.Connections
			m.Scheduled += n.Scheduled
			m.Sent += n.Sent
			m.Completed += n.Completed
			m.Errors += n.Errors
			m.Timeouts += n.Timeouts
			m.Unsent += n.Unsent
			m.Redirects += n.Redirects
			m.Moved += n.Moved
			m.Ask += n.Ask
			for j := range h {
				hs[k][j] = append(hs[k][j], h[j])
			}
		}
	}
	for k := range out {
		var sum [3]*hdrhistogram.Histogram
		for j := range sum {
			var err error
			if sum[j], err = addHistograms(hs[k][j]); err != nil {
				return nil, fmt.Errorf("node %s: %w", strconv.Quote(out[k].Addr), err)
			}
		}
		n := &out[k]
		n.ResponseMs, n.ServiceMs, n.ReceiveLagMs = summary(sum[0]), summary(sum[1]), summary(sum[2])
		for j, enc := range []*string{&n.Histograms.Response, &n.Histograms.Service, &n.Histograms.ReceiveLag} {
			var err error
			if *enc, err = histo.Encode(sum[j]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// sameNode reports whether a and b are one primary: the same addr, and
// the same id where both have one.
func sameNode(a, b Node) bool {
	return a.Addr == b.Addr && (a.ID == "" || b.ID == "" || a.ID == b.ID)
}

func addCodes(dst, src map[string]uint64) {
	for k, v := range src {
		dst[k] += v
	}
}

// mergedTarget is the whole timeline's target rate: --rate, or the
// stages' mean over the measured window (as a run computes it); without
// either, the sum of the shards' shares.
func mergedTarget(parts []Test, config map[string]any) *float64 {
	f := parts[0]
	if len(f.Stages) > 0 {
		list := make([]scheduler.Stage, len(f.Stages))
		for i, s := range f.Stages {
			list[i] = scheduler.Stage{Duration: time.Duration(math.Round(s.DurationS * 1e9)), Target: scheduler.RatePerSecond(s.TargetRate)}
		}
		if st, err := scheduler.NewStages(list); err == nil {
			warm := int64(math.Round(f.WarmupS * 1e9))
			v := scheduler.RatePerSecond(st.Mean(warm, int64(st.Duration()))).PerSecond()
			return &v
		}
	}
	if r, ok := config["rate"].(float64); ok && r > 0 {
		return &r
	}
	sum, found := 0.0, false
	for _, p := range parts {
		if p.TargetRate != nil {
			sum, found = sum+*p.TargetRate, true
		}
	}
	if !found {
		return nil
	}
	sum = round(sum, 3)
	return &sum
}

// addHistograms adds hs (nil entries are absent ones); nil when all are.
func addHistograms(hs []*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if !slices.ContainsFunc(hs, func(h *hdrhistogram.Histogram) bool { return h != nil }) {
		return nil, nil
	}
	sum, dropped := histo.Merge(hs...)
	if dropped > 0 {
		return nil, errDoesNotFit(dropped)
	}
	return sum, nil
}

// errDoesNotFit refuses a merge whose histograms have values beyond
// pacer's range.
func errDoesNotFit(dropped int64) error {
	return fmt.Errorf("%d values do not fit pacer's histograms", dropped)
}

// mergeIntervals merges the shards' interval series: intervals with the
// same start (on the shared timeline's clock) are added.
func mergeIntervals(parts []Test, series func(Test) []Interval) ([]Interval, error) {
	byStart := map[float64][]Interval{}
	var starts []float64
	for _, p := range parts {
		for _, iv := range series(p) {
			if _, ok := byStart[iv.StartS]; !ok {
				starts = append(starts, iv.StartS)
			}
			byStart[iv.StartS] = append(byStart[iv.StartS], iv)
		}
	}
	if len(starts) == 0 {
		return nil, nil
	}
	sort.Float64s(starts)
	out := make([]Interval, 0, len(starts))
	for _, s := range starts {
		ivs := byStart[s]
		m := Interval{StartS: s}
		hs := make([]Histograms, len(ivs))
		var sent, recv uint64
		withBytes := false
		for i, iv := range ivs {
			m.DurationS = math.Max(m.DurationS, iv.DurationS)
			m.Scheduled += iv.Scheduled
			m.Sent += iv.Sent
			m.Completed += iv.Completed
			m.Errors += iv.Errors
			m.Timeouts += iv.Timeouts
			m.Unsent += iv.Unsent
			if iv.BytesSent != nil {
				sent, withBytes = sent+*iv.BytesSent, true
			}
			if iv.BytesReceived != nil {
				recv, withBytes = recv+*iv.BytesReceived, true
			}
			hs[i] = iv.Histograms
		}
		if withBytes {
			m.BytesSent, m.BytesReceived = &sent, &recv
		}
		var err error
		if m.Latencies, err = mergeLatencies(hs); err != nil {
			return nil, fmt.Errorf("interval at %gs: %w", s, err)
		}
		out = append(out, m)
	}
	return out, nil
}
