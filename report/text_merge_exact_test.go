package report_test

import (
	"bytes"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
	reporttext "github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/verdict"
)

// TestMergeIsExact: counts and bytes are sums, the merged histograms are
// the added histograms (so every percentile is that of the sum), the
// intervals with one start are added, and the result reads back as a
// normal document that renders.
func TestMergeIsExact(t *testing.T) {
	t.Parallel()
	in := reporttest.Shards[merge.Input](t, 3)
	doc, err := merge.Merge(in, merge.Options{Tool: report.Tool{Name: "pacer", Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	verdict.Merged(doc)                          // as pacer merge judges the merged tests
	back := report.InputOf(t, "merged", doc).Doc // what pacer report reads
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
	if m.Verdict != "ok" {
		t.Errorf("verdict %s: %s", m.Verdict, m.VerdictReason)
	}
	var text bytes.Buffer
	if err := reporttext.Render(&text, back); err != nil || !strings.Contains(text.String(), "scheduled 6000") {
		t.Fatalf("render: %v\n%s", err, text.String())
	}
}

func decodeAll(t *testing.T, texts ...string) []*hdrhistogram.Histogram {
	t.Helper()
	var hs []*hdrhistogram.Histogram
	for _, s := range texts {
		hs = append(hs, reference.Histogram(t, s))
	}
	return hs
}
