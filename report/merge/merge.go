package merge

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// Options tune Merge.
type Options struct {
	// Partial merges the shards there are when some are missing; without
	// it a missing shard is refused.
	Partial bool
	// Tool is the program writing the merged document.
	Tool report.Tool
}

// Input is one shard's document and the name to call it by.
type Input struct {
	Label string
	Doc   *report.Document
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
// computed again from the sums (the verdicts are the caller's to judge
// again: verdict.Merged; a shard that lost its target loses the merged
// test's here); a cluster's nodes are merged
// the same way (see mergeNodes). It refuses (an error wrapping ErrMerge)
// documents that are not shards of one timeline (K and N as --shard
// takes them), a missing shard unless opt.Partial, and sums that overflow
// a 64-bit count. The per-shard SLO verdicts are not carried over; the
// server's side is kept once when the shards shared a target, once per
// target when they did not (see mergeServers), and the connections are
// summed with each shard's kept (Test.ShardConnections).
func Merge(in []Input, opt Options) (*report.Document, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: no documents", report.ErrMerge)
	}
	ks, err := checkShards(in, opt.Partial)
	if err != nil {
		return nil, err
	}
	// In the order of the shards' K, as Shard.Merged lists them.
	in = slices.Clone(in)
	slices.SortStableFunc(in, func(a, b Input) int { return a.Doc.Shard.K - b.Doc.Shard.K })
	first := in[0].Doc
	targets := groupTargets(in)
	out := &report.Document{
		Schema: report.Schema, Mode: first.Mode, Tool: opt.Tool,
		StartedAt: first.StartedAt, Config: map[string]any{},
		StartAt: first.StartAt,
		Shard:   &report.Shard{N: first.Shard.N, Merged: ks},
	}
	if len(targets) == 1 { // one server: what it said of itself, once
		out.Server = first.Server
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
		parts := make([]report.Test, len(in))
		for j, s := range in {
			parts[j] = s.Doc.Tests[i]
		}
		t, err := mergeTest(parts, in, first.Config)
		if err != nil {
			return nil, err
		}
		mergeServers(&t, parts, in, targets)
		out.Tests = append(out.Tests, t)
	}
	if out.Tests == nil {
		out.Tests = []report.Test{}
	}
	return out, nil
}

// checkShards refuses documents that are not distinct shards of one
// timeline and returns their K's, in order.
func checkShards(in []Input, partial bool) ([]int, error) {
	refuse := func(format string, args ...any) error {
		return usage.Option("", "%w: "+format, append([]any{report.ErrMerge}, args...)...)
	}
	first := in[0]
	seen := map[int]string{}
	var ks []int
	for _, s := range in {
		switch d := s.Doc; {
		case d.Shard == nil:
			return nil, refuse("%s is not a shard's result (run with {shard} K/N)", s.Label)
		case d.Shard.K == 0:
			return nil, refuse("%s is already a merged result", s.Label)
		case d.Shard.N < 1 || d.Shard.N > timeline.MaxShards:
			// As --shard reads them: nothing is sized by an N beyond it.
			return nil, refuse("%s is shard %d/%d: N from 1 to %d", s.Label, d.Shard.K, d.Shard.N, timeline.MaxShards)
		case d.Shard.K < 1 || d.Shard.K > d.Shard.N:
			return nil, refuse("%s is shard %d/%d: K from 1 to %d", s.Label, d.Shard.K, d.Shard.N, d.Shard.N)
		case d.Mode != "open" && d.Mode != "pubsub" && d.Mode != "stream" && d.Mode != "tracking":
			return nil, refuse("%s: only open-model results (pacer run, pubsub, stream, tracking) are split into shards", s.Label)
		case d.Mode != first.Doc.Mode:
			return nil, refuse("%s is a %s result, %s a %s one", first.Label, first.Doc.Mode, s.Label, d.Mode)
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
			return nil, refuse("%s starts at %s, %s at %s: give every shard the same {start-at}", first.Label, orNone(first.Doc.StartAt), s.Label, orNone(d.StartAt))
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
		// The first few by number: N may be a million.
		const shown = 8
		var missing []string
		for k := 1; k <= n && len(missing) < shown; k++ {
			if seen[k] == "" {
				missing = append(missing, strconv.Itoa(k))
			}
		}
		list := strings.Join(missing, ", ")
		if all := n - len(ks); all > len(missing) {
			list += fmt.Sprintf(", … (%d in all)", all)
		}
		return nil, refuse("shard %s of %d missing ({partial} merges the shards given)", list, n)
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
func sameConfig(a, b Input) error {
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
func sameTimeline(a, b Input, i int) error {
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

func commandNames(t report.Test) []string {
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
func mergeTest(parts []report.Test, in []Input, config map[string]any) (report.Test, error) {
	f := parts[0]
	t := report.Test{
		ID: f.ID, Name: f.Name, StartedAt: f.StartedAt, Mode: f.Mode, Arrival: f.Arrival, Pacing: f.Pacing,
		IntervalS: f.IntervalS, Stages: f.Stages, WarmupS: f.WarmupS, Errors: map[string]uint64{},
		PacingQuantumUs: f.PacingQuantumUs,
	}
	var lagLimit float64
	var warm scheduler.Counts
	hasWarm := false
	var sum sums
	for _, p := range parts {
		if p.StartedAt != "" && (t.StartedAt == "" || p.StartedAt < t.StartedAt) {
			t.StartedAt = p.StartedAt
		}
		t.DurationS = math.Max(t.DurationS, p.DurationS)
		sum.counts(&t.Counts, p.Counts, "counts")
		sum.codes(t.Errors, p.Errors)
		if t.FirstError == "" {
			t.FirstError = p.FirstError
		}
		sum.int(&t.Connections, p.Connections, "connections")
		t.ShardConnections = append(t.ShardConnections, p.Connections)
		t.Interrupted = t.Interrupted || p.Interrupted
		sum.add(&t.ConnectionsLost, p.ConnectionsLost, "connections_lost")
		sum.add(&t.Reconnects, p.Reconnects, "reconnects")
		sum.add(&t.DroppedBacklog, p.DroppedBacklog, "dropped_backlog")
		t.BlockedS = report.Round(t.BlockedS+p.BlockedS, 3)
		sum.add(&t.Unsolicited, p.Unsolicited, "unsolicited")
		sum.add(&t.HeldSent, p.HeldSent, "held_sent")
		sum.add(&t.HeldUnsent, p.HeldUnsent, "held_unsent")
		sum.add(&t.BytesSent, p.BytesSent, "bytes_sent")
		sum.add(&t.BytesReceived, p.BytesReceived, "bytes_received")
		if p.LagLimitMs != nil {
			lagLimit = math.Max(lagLimit, *p.LagLimitMs)
		}
		if st := p.PacingSteps; len(st) > 0 && (len(t.PacingSteps) == 0 || st[0].AtS < t.PacingSteps[0].AtS) {
			t.PacingSteps = st // the first shard to step back: from then on the merge is not the precision asked
		}
		if p.WarmupCounts != nil {
			sum.counts(&warm, *p.WarmupCounts, "warmup_counts")
			hasWarm = true
		}
	}
	if err := sum.err(); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	if hasWarm {
		t.WarmupCounts = &warm
	}
	if lagLimit > 0 {
		t.LagLimitMs = &lagLimit
	}
	if w := t.DurationS; w > 0 {
		t.AchievedRate = report.Round(float64(t.Counts.Completed)/w, 3)
		t.BytesSentPerS = report.Round(float64(t.BytesSent)/w, 3)
		t.BytesReceivedPerS = report.Round(float64(t.BytesReceived)/w, 3)
	}
	t.TargetRate = mergedTarget(parts, config)
	hs := make([]report.Histograms, len(parts))
	for i, p := range parts {
		hs[i] = p.Histograms
	}
	var err error
	if t.Latencies, err = report.MergeLatencies(hs); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	if t.Intervals, err = mergeIntervals(parts, func(p report.Test) []report.Interval { return p.Intervals }); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	if t.Nodes, err = mergeNodes(parts, in); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	for k := range t.Nodes {
		addr := t.Nodes[k].Addr
		if t.Nodes[k].Intervals, err = mergeIntervals(parts, func(p report.Test) []report.Interval {
			for _, n := range p.Nodes {
				if n.Addr == addr {
					return n.Intervals
				}
			}
			return nil
		}); err != nil {
			return t, fmt.Errorf("test %s, node %s: %w", f.ID, addr, err)
		}
	}
	t.Events, t.EventBoundMs, t.EventsDropped = mergeEvents(parts)
	report.MarkIntervals(t.Intervals, t.Events)
	for _, name := range commandNames(f) {
		c := report.Command{Errors: map[string]uint64{}}
		for i, p := range parts {
			pc := p.Commands[name]
			sum.counts(&c.Counts, pc.Counts, "command "+name)
			sum.codes(c.Errors, pc.Errors)
			hs[i] = pc.Histograms
		}
		if err := sum.err(); err != nil {
			return t, fmt.Errorf("test %s: %w", f.ID, err)
		}
		if c.Latencies, err = report.MergeLatencies(hs); err != nil {
			return t, fmt.Errorf("test %s, command %s: %w", f.ID, name, err)
		}
		if c.Intervals, err = mergeIntervals(parts, func(p report.Test) []report.Interval { return p.Commands[name].Intervals }); err != nil {
			return t, fmt.Errorf("test %s, command %s: %w", f.ID, name, err)
		}
		if t.Commands == nil {
			t.Commands = map[string]report.Command{}
		}
		t.Commands[name] = c
	}
	// Last: it reads the figures, which are kept once made.
	if t.Messages, err = mergeMessages(parts, in, &t); err != nil {
		return t, fmt.Errorf("test %s: %w", f.ID, err)
	}
	// A shard that lost its target loses the merged test's; any other
	// verdict is the caller's to judge from the sums (verdict.Merged).
	for i, p := range parts {
		if p.Verdict == report.VerdictTargetLost {
			t.Verdict, t.VerdictReason = p.Verdict, fmt.Sprintf("%s: %s", in[i].Label, p.VerdictReason)
			return t, nil
		}
	}
	if _, err := t.Facts(); err != nil {
		return t, err
	}
	return t, nil
}

// mergedTarget is the whole timeline's target rate: --rate, or the
// stages' mean over the measured window (as a run computes it); without
// either, the sum of the shards' shares.
func mergedTarget(parts []report.Test, config map[string]any) *float64 {
	f := parts[0]
	if len(f.Stages) > 0 {
		list := make([]timeline.Stage, len(f.Stages))
		for i, s := range f.Stages {
			list[i] = timeline.Stage{Duration: time.Duration(math.Round(s.DurationS * 1e9)), Target: timeline.RatePerSecond(s.TargetRate)}
		}
		if st, err := timeline.NewStages(list); err == nil {
			warm := int64(math.Round(f.WarmupS * 1e9))
			v := timeline.RatePerSecond(st.Mean(warm, int64(st.Duration()))).PerSecond()
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
	sum = report.Round(sum, 3)
	return &sum
}
