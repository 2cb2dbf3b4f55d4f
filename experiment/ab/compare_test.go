package ab_test

import (
	"context"
	"testing"
	"time"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/ab"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/timeline"
)

// TestDocumentsAndCompare: two targets measured in three interleaved
// rounds give each side a document whose test holds its three rounds as
// runs, and Compare pairs them round by round, as pacer diff of the two
// files would.
func TestDocumentsAndCompare(t *testing.T) {
	t.Parallel()
	var sides [2]ab.Side
	for s := range sides {
		srv := embedded.MustStart(embedded.Config{})
		defer srv.Close()
		sides[s] = ab.Side{Env: experiment.InProcessEnv(srv.Addr())}
	}
	tests := []experiment.Test{experiment.Command("ping", "PING", "PING")}
	cfg := ab.Config{Tests: tests, Rounds: 3, RoundDuration: 300 * time.Millisecond, Conns: 2, Interval: 100 * time.Millisecond,
		Open: &ab.Open{Rate: timeline.RatePerSecond(2000), Arrival: "uniform"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := ab.Measure(ctx, sides, cfg, nil, nil)
	if res.Err != nil || res.Interrupted {
		t.Fatalf("measure: %v, interrupted %v", res.Err, res.Interrupted)
	}
	// The sides pair up by their session, as pacer ab's config says it.
	docs, lost, err := res.Documents(tests, func(s int) *report.Document {
		doc := report.NewDocument("open", "test", nil)
		doc.Config = map[string]any{"ab": map[string]any{"session": "s1", "side": ab.SideName(s)}}
		return doc
	})
	if err != nil || lost != nil {
		t.Fatalf("documents: %v, lost %+v", err, lost)
	}
	for s, doc := range docs {
		if len(doc.Tests) != 1 || doc.Tests[0].Repeats == nil || len(doc.Tests[0].Repeats.Runs) != 3 {
			t.Fatalf("side %s: %d tests, want one of 3 rounds", ab.SideName(s), len(doc.Tests))
		}
		// Each round's figures are its own, its service times included
		// (the pool once added every round into the first one's).
		for i, run := range doc.Tests[0].Repeats.Runs {
			if run.ServiceMs == nil || run.ResponseMs == nil || run.ServiceMs.Count != run.ResponseMs.Count {
				t.Errorf("side %s, round %d: service %+v, response %+v: want as many service times as responses", ab.SideName(s), i+1, run.ServiceMs, run.ResponseMs)
			}
		}
	}
	d, err := ab.Compare(docs, [2]string{"a.json", "b.json"}, [2]string{"A", "B"}, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tests) != 1 || len(d.Tests[0].Figures) == 0 || !d.Tests[0].Figures[0].Paired() || d.Baseline.Target != "A" || d.Candidate.Target != "B" {
		t.Fatalf("diff: %+v", d)
	}
}
