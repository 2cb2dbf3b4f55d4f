package stream

import (
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Test makes the run a report test, judged against slo: its deliveries are
// the test's latencies, the producer's own requests beside them, with the
// at-least-once accounting and the lag.
func (res *Result) Test(r Config, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	return verdict.NewMessagesTest(report.MessagesRun{Kind: report.KindStream, Publisher: res.Producer, Messages: res.Messages,
		Channels: r.Streams, Groups: r.Groups, Consumers: r.Consumers, PayloadBytes: r.Size, Published: res.Added,
		Stream: &report.StreamDeliveries{Added: res.Added, Acked: res.Acked, Redelivered: res.Redelivered, NeverDelivered: res.Messages.Lost}},
		report.TestOptions{ID: "stream", Server: res.Server, Percentiles: true}, slo)
}
