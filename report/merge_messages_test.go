package report_test

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
	"github.com/pacer-load/pacer/verdict"
)

// TestMergeMessages: two shards' messages add up, receivers keep their
// shard, and the merged test judges its loss again.
func TestMergeMessages(t *testing.T) {
	t.Parallel()
	var in []merge.Input
	for k := 1; k <= 2; k++ {
		tt, _, err := verdict.NewMessagesTest(report.LossyRun(t, 500, 2, 2, float64(k), uint64(k)), report.TestOptions{ID: "pubsub"}, verdict.SLO{})
		if err != nil {
			t.Fatal(err)
		}
		tt.StartedAt = "2030-01-01T00:00:10Z"
		d := report.CraftDoc("pubsub", *tt)
		d.Config = map[string]any{"connections": 2.0, "rate": 1000.0}
		d.Shard = &report.Shard{K: k, N: 2}
		b, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := report.ReadInput("x", b)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, merge.Input{Label: "s" + string(rune('0'+k)), Doc: got.Doc})
	}
	out, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := out.Tests[0].Messages
	if out.Mode != "pubsub" || m.Expected != 4000 || m.Lost != 3 || m.Delivered != 3997 || len(m.Receivers) != 4 || m.Receivers[2].Name != "shard 2 subscriber 1" ||
		m.PublishReceivers.Sum != 4000 || out.Tests[0].ResponseMs.Count != 3997 || out.Tests[0].Intervals[0].Messages.Delivered != 2000 {
		t.Errorf("merged %+v", m)
	}
	in[1].Doc.Mode = "stream"
	if _, err := merge.Merge(in, merge.Options{}); err == nil || !strings.Contains(err.Error(), "a pubsub result") {
		t.Errorf("a pubsub and a stream shard: %v", err)
	}
}
