package pubsub

import (
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Test makes the side a report test, judged against slo: its deliveries
// are the test's latencies, the publisher's own requests beside them.
func (s *Side) Test(cfg Config, slo verdict.SLO) (*report.Test, verdict.Judgement, error) {
	rc := s.Receivers
	pr := &report.PublishReceivers{Replies: rc.Replies, Sum: rc.Sum, Min: rc.Min, Max: rc.Max}
	for _, d := range rc.Drops {
		pr.Drops = append(pr.Drops, report.ReceiverDrop{AtS: d.At.Seconds(), From: d.From, To: d.To})
	}
	if rc.Replies > 0 {
		pr.Mean = float64(rc.Sum) / float64(rc.Replies)
	}
	t, j, err := verdict.NewMessagesTest(report.MessagesRun{Kind: report.KindPubSub, Publisher: s.Publisher, Messages: s.Messages,
		Channels: cfg.Channels, Subscribers: cfg.Subscribers, Patterns: cfg.Patterns, Sharded: cfg.Sharded, PayloadBytes: cfg.Size,
		Published: s.Published, Receivers: pr}, report.TestOptions{ID: "pubsub", Server: s.Server, Percentiles: true}, slo)
	if err != nil {
		return nil, j, err
	}
	if s.Closed {
		t.Name = s.Publisher.Name
	}
	return t, j, nil
}
