package report

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// shardDoc crafts shard k of n: 1/n of a 3000/s timeline for 2 s, with
// its own service times, in 250 ms intervals.
func shardDoc(t *testing.T, k, n int) *Document {
	t.Helper()
	test := craft(t, fixture{name: "GET", mode: "open", rate: 3000 / float64(n), seconds: 2, base: 0.1 * float64(k), interval: 0.25, seed: uint64(k)})
	test.ID = "get"
	test.StartedAt = "2030-01-01T00:00:10Z"
	limit := 1.0
	test.LagLimitMs = &limit
	d := craftDoc("open", test)
	d.Config = map[string]any{"connections": 10.0, "rate": 3000.0, "tests": []any{"get"}, "seed_str": "7", "arrival": "uniform", "duration_s": 2.0, "target": "10.0.0.5:6379"}
	d.Shard = &Shard{K: k, N: n}
	d.StartAt = "2030-01-01T00:00:10Z"
	return d
}

// shardJSON holds each crafted shard's document as pacer wrote it, by
// [k, n]: crafting allocates a histogram per interval, which the race
// detector makes the bulk of this package's test time, and every test
// wants the same shards.
var shardJSON sync.Map

func shardInputs(t *testing.T, n int) []MergeInput {
	t.Helper()
	var in []MergeInput
	for k := 1; k <= n; k++ {
		b, ok := shardJSON.Load([2]int{k, n})
		if !ok {
			text, err := shardDoc(t, k, n).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			b, _ = shardJSON.LoadOrStore([2]int{k, n}, text)
		}
		// Read anew each time, as pacer merge reads them: the tests change
		// their copies.
		got, err := ReadInput("x", b.([]byte))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, MergeInput{Label: "shard-" + string(rune('0'+k)) + ".json", Doc: got.Doc})
	}
	return in
}

func decodeAll(t *testing.T, texts ...string) []*hdrhistogram.Histogram {
	t.Helper()
	var hs []*hdrhistogram.Histogram
	for _, s := range texts {
		hs = append(hs, reference.Histogram(t, s))
	}
	return hs
}

// TestMergeIsExact: counts and bytes are sums, the merged histograms are
// the added histograms (so every percentile is that of the sum), the
// intervals with one start are added, and the result reads back as a
// normal document that renders.
func TestMergeIsExact(t *testing.T) {
	t.Parallel()
	in := shardInputs(t, 3)
	doc, err := Merge(in, MergeOptions{Tool: Tool{Name: "pacer", Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	back := input(t, "merged", doc).Doc // what pacer report reads
	m := back.Tests[0]
	if back.Shard == nil || back.Shard.N != 3 || len(back.Shard.Merged) != 3 || back.Shard.K != 0 || back.StartAt != "2030-01-01T00:00:10Z" {
		t.Fatalf("shard %+v start_at %q", back.Shard, back.StartAt)
	}
	var resp []string
	var scheduled, completed uint64
	for _, s := range in {
		st := s.Doc.Tests[0]
		scheduled += st.Counts.Scheduled
		completed += st.Counts.Completed
		resp = append(resp, st.Histograms.Response)
	}
	if m.Counts.Scheduled != scheduled || m.Counts.Completed != completed || scheduled != 6000 {
		t.Fatalf("counts %+v, want the sums %d and %d", m.Counts, scheduled, completed)
	}
	want, _ := histo.Merge(decodeAll(t, resp...)...)
	got := decodeAll(t, m.Histograms.Response)[0]
	if !got.Equals(want) {
		t.Fatal("the merged response histogram is not the sum of the shards'")
	}
	ws := histo.Summarize(want)
	ws.Count = 0 // not in the JSON
	if m.ResponseMs == nil || *m.ResponseMs != ws {
		t.Fatalf("response summary %+v, want the added histograms' %+v", m.ResponseMs, ws)
	}
	if *m.TargetRate != 3000 || m.AchievedRate != 3000 || m.Connections != 30 || back.Config["connections"] != 30.0 {
		t.Fatalf("target %v achieved %v connections %d/%v", *m.TargetRate, m.AchievedRate, m.Connections, back.Config["connections"])
	}
	if len(m.Intervals) != 8 {
		t.Fatalf("%d intervals, want the shards' 8", len(m.Intervals))
	}
	var ivSched uint64
	for i, iv := range m.Intervals {
		var parts []string
		var sched uint64
		for _, s := range in {
			parts = append(parts, s.Doc.Tests[0].Intervals[i].Histograms.Response)
			sched += s.Doc.Tests[0].Intervals[i].Scheduled
		}
		if iv.Scheduled != sched || iv.StartS != in[0].Doc.Tests[0].Intervals[i].StartS {
			t.Errorf("interval %d at %v: scheduled %d, want %d", i, iv.StartS, iv.Scheduled, sched)
		}
		w, _ := histo.Merge(decodeAll(t, parts...)...)
		if !decodeAll(t, iv.Histograms.Response)[0].Equals(w) {
			t.Errorf("interval %d: histogram is not the sum", i)
		}
		ivSched += iv.Scheduled
	}
	if ivSched != m.Counts.Scheduled {
		t.Errorf("intervals schedule %d of %d", ivSched, m.Counts.Scheduled)
	}
	// Merge leaves the verdict to verdict.Merged, which judges the sums.
	if m.Verdict != "" {
		t.Errorf("merge judged: %s", m.Verdict)
	}
	j := judgeHook(&m)
	m.Verdict, m.VerdictReason, m.Outcome = j.Verdict, j.Reason, j.Outcome
	if m.Verdict != "ok" {
		t.Errorf("verdict %s: %s", m.Verdict, m.VerdictReason)
	}
	var text bytes.Buffer
	if err := Render(&text, back); err != nil || !strings.Contains(text.String(), "scheduled 6000") {
		t.Fatalf("render: %v\n%s", err, text.String())
	}
}

// TestMergeRefuses: documents that are not the shards of one timeline.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(in []MergeInput) []MergeInput
		partial bool
		want    string
	}{
		{"a missing shard", func(in []MergeInput) []MergeInput { return in[:2] }, false, "shard 3 of 3 missing"},
		{"the same shard twice", func(in []MergeInput) []MergeInput { return append(in, in[0]) }, false, "are both shard 1/3"},
		{"another rate", func(in []MergeInput) []MergeInput { in[1].Doc.Config["rate"] = 6000.0; return in }, false, "differ in rate: 3000 and 6000"},
		{"another seed", func(in []MergeInput) []MergeInput { in[2].Doc.Config["seed_str"] = "8"; return in }, false, "differ in seed_str"},
		{"another target", func(in []MergeInput) []MergeInput { in[2].Doc.Config["target"] = "10.0.0.6:6379"; return in }, false, "differ in target"},
		{"another split", func(in []MergeInput) []MergeInput { in[1].Doc.Shard.N = 4; return in }, false, "not the same split"},
		{"another start", func(in []MergeInput) []MergeInput { in[1].Doc.StartAt = ""; return in }, false, "give every shard the same --start-at"},
		{"another interval", func(in []MergeInput) []MergeInput { in[1].Doc.Tests[0].IntervalS = 1; return in }, false, "differ in interval_s"},
		{"another test", func(in []MergeInput) []MergeInput { in[1].Doc.Tests[0].ID = "set"; return in }, false, "differ in test"},
		{"fewer tests", func(in []MergeInput) []MergeInput { in[1].Doc.Tests = nil; return in }, false, "holds 1 tests"},
		{"not a shard", func(in []MergeInput) []MergeInput { in[1].Doc.Shard = nil; return in }, false, "is not a shard's result"},
		{"a merged one", func(in []MergeInput) []MergeInput { in[1].Doc.Shard.K = 0; return in }, false, "already a merged result"},
		{"a closed loop", func(in []MergeInput) []MergeInput { in[0].Doc.Mode = "closed"; return in }, true, "only open-model results"},
	}
	for _, tc := range tests {
		_, err := Merge(tc.change(shardInputs(t, 3)), MergeOptions{Partial: tc.partial})
		if !errors.Is(err, ErrMerge) || !strings.Contains(usagetest.CLI(err), tc.want) || strings.Contains(usagetest.CLI(err), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
	// --partial merges what there is and says which.
	doc, err := Merge(shardInputs(t, 3)[1:], MergeOptions{Partial: true})
	if err != nil || len(doc.Shard.Merged) != 2 || doc.Shard.Merged[0] != 2 || doc.Tests[0].Counts.Scheduled != 4000 {
		t.Fatalf("partial: %v %+v", err, doc)
	}
}
