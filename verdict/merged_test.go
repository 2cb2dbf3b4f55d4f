package verdict

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
)

// mergedShards makes n shards of one open timeline as pacer writes and
// pacer merge reads them (report.ReadInput), lets edit change each
// shard's test before it is written, and merges them (report.Merge).
func mergedShards(t *testing.T, n int, edit func(k int, tt *report.Test)) *report.Document {
	t.Helper()
	var in []merge.Input
	for k := 1; k <= n; k++ {
		tt, err := report.Synthetic(report.SyntheticRun{Name: "GET", Mode: "open", Rate: 1000, Seconds: 1, Base: 0.2, Interval: 0.25, Seed: uint64(k)})
		if err != nil {
			t.Fatal(err)
		}
		tt.ID, tt.StartedAt = "get", "2030-01-01T00:00:10Z"
		limit := 1.0
		tt.LagLimitMs = &limit
		if edit != nil {
			edit(k, &tt)
		}
		d := report.SyntheticDocument("open", tt)
		d.Config = map[string]any{"connections": 10.0, "rate": 2000.0, "tests": []any{"get"}, "seed_str": "7", "arrival": "uniform", "duration_s": 1.0, "target": "127.0.0.1:6379"}
		d.Shard = &report.Shard{K: k, N: n}
		d.StartAt = "2030-01-01T00:00:10Z"
		b, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := report.ReadInput("shard", b)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, merge.Input{Label: "shard-" + string(rune('0'+k)) + ".json", Doc: got.Doc})
	}
	doc, err := merge.Merge(in, merge.Options{Tool: report.Tool{Name: "pacer", Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestMerged: a merged document is judged from its sums by the trust
// rule, a shard's lost target stays the merged test's (error), and an
// SLO on the sums that the server missed fails it; the document's
// outcome (OfDocument, pacer merge's exit code) follows.
func TestMerged(t *testing.T) {
	t.Run("passes", func(t *testing.T) {
		doc := mergedShards(t, 2, func(_ int, tt *report.Test) {
			// A shard's own SLO verdict is not carried over.
			tt.SLO = &report.SLOResult{Spec: "p99<=0.001ms", Pass: false}
		})
		got := &doc.Tests[0]
		if got.Verdict != "" || got.SLO != nil {
			t.Fatalf("merged test arrives judged: verdict %q, SLO %+v", got.Verdict, got.SLO)
		}
		Merged(doc)
		if got.Verdict != report.VerdictOK || got.Outcome != "pass" {
			t.Errorf("verdict %q outcome %q (%s), want ok and pass", got.Verdict, got.Outcome, got.VerdictReason)
		}
		if o, lines := OfDocument(doc); o != Pass || len(lines) != 0 {
			t.Errorf("document: %s %q, want pass", o, lines)
		}
	})
	t.Run("a shard lost its target", func(t *testing.T) {
		doc := mergedShards(t, 2, func(k int, tt *report.Test) {
			if k == 2 {
				tt.Verdict, tt.VerdictReason, tt.Outcome = report.VerdictTargetLost, "every connection was lost", "error"
			}
		})
		Merged(doc)
		got := &doc.Tests[0]
		if got.Verdict != report.VerdictTargetLost || got.Outcome != "error" || !strings.Contains(got.VerdictReason, "every connection was lost") {
			t.Errorf("verdict %q outcome %q reason %q, want target_lost, error and the shard's reason", got.Verdict, got.Outcome, got.VerdictReason)
		}
		o, lines := OfDocument(doc)
		if o != Error || o.ExitCode() != ExitError || len(lines) != 1 || !strings.Contains(lines[0], "error: target lost") {
			t.Errorf("document: %s %q, want error (exit 1) with the lost target's line", o, lines)
		}
	})
	t.Run("the SLO on the sums fails", func(t *testing.T) {
		doc := mergedShards(t, 2, nil)
		got := &doc.Tests[0]
		slo, err := ParseSLO("p50<=0.01ms")
		if err != nil {
			t.Fatal(err)
		}
		if got.SLO, err = slo.Check(got); err != nil {
			t.Fatal(err)
		}
		if got.SLO.Pass {
			t.Fatalf("SLO %s passed on sums of a 0.2 ms service", got.SLO.Line())
		}
		Merged(doc)
		if got.Outcome != "fail" || got.Verdict != report.VerdictOK || !strings.Contains(got.VerdictReason, "the server missed") {
			t.Errorf("verdict %q outcome %q reason %q, want ok, fail and the server's miss", got.Verdict, got.Outcome, got.VerdictReason)
		}
		o, lines := OfDocument(doc)
		if o != Fail || o.ExitCode() != ExitFail || len(lines) != 1 || !strings.Contains(lines[0], "fail: ") {
			t.Errorf("document: %s %q, want fail (exit 3) with the SLO's line", o, lines)
		}
	})
}
