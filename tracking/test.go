package tracking

import (
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Test makes the run a report test, judged against slo: its invalidations
// are the test's deliveries and latencies, the writer's own requests
// beside them, with the readers' accounting.
func (res *Result) Test(cfg Config, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	c := res.Counts
	inv := &report.Invalidations{BCAST: cfg.BCAST, Pushes: c.Pushes, Keys: c.Keys, Flushes: c.Flushes, Refetches: c.Refetches,
		Uncached: c.Uncached, StaleAtEnd: c.StaleAtEnd, Spurious: c.Spurious, Forgotten: c.Forgotten}
	t, j, err := verdict.NewMessagesTest(report.MessagesRun{Kind: report.KindTracking, Publisher: res.Writer, Messages: res.Messages,
		Channels: cfg.Keys, Subscribers: cfg.Readers, PayloadBytes: cfg.Size, Published: res.Written, Tracking: inv},
		report.TestOptions{ID: "tracking", Server: res.Server, Percentiles: true}, slo)
	if err == nil && res.Closed {
		t.Name = res.Writer.Name
	}
	return t, j, err
}
