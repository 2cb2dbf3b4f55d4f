package merge

import (
	"fmt"
	"strconv"

	"github.com/pacer-load/pacer/report"
)

// mergeMessages adds the shards' messages of one test. Each shard's
// subscribers account for its own publisher's messages (the payload
// carries its run), so counts add up; receivers and events are listed
// shard by shard, named after it; the publisher's latencies are added as
// histograms; a stream's lag is the sum of the shards' at each interval
// (their consumer groups are the shards'), to be judged again on the sums.
func mergeMessages(parts []report.Test, in []Input, t *report.Test) (*report.Messages, error) {
	f := parts[0].Messages
	if f == nil {
		return nil, nil
	}
	out := &report.Messages{Kind: f.Kind, Channels: f.Channels, Patterns: f.Patterns, Sharded: f.Sharded, Groups: f.Groups,
		PayloadBytes: f.PayloadBytes, ReceiveClock: f.ReceiveClock, Receivers: []report.Receiver{}, Events: []report.MessageEvent{}}
	var sum sums
	hs := make([]report.Histograms, 0, len(parts))
	var recv *report.PublishReceivers
	var stream *report.StreamDeliveries
	var tracking *report.Invalidations
	for i, p := range parts {
		m := p.Messages
		if m == nil || m.Kind != f.Kind {
			return nil, fmt.Errorf("%w: %s is not a %s result", report.ErrMerge, in[i].Label, f.Kind)
		}
		out.Subscribers += m.Subscribers
		out.Consumers = max(out.Consumers, m.Consumers)
		if m.ReceiveClock != out.ReceiveClock {
			out.ReceiveClock = ""
		}
		for _, c := range []struct {
			dst *uint64
			v   uint64
			n   string
		}{{&out.Published, m.Published, "published"}, {&out.Expected, m.Expected, "expected"}, {&out.Delivered, m.Delivered, "delivered"},
			{&out.Lost, m.Lost, "lost"}, {&out.Duplicates, m.Duplicates, "duplicates"}, {&out.Reordered, m.Reordered, "reordered"},
			{&out.Stale, m.Stale, "stale"}, {&out.Foreign, m.Foreign, "foreign"}, {&out.WarmupDelivered, m.WarmupDelivered, "warmup_delivered"},
			{&out.ClockErrors, m.ClockErrors, "clock_errors"}} {
			sum.add(c.dst, c.v, "messages: "+c.n)
		}
		hs = append(hs, m.Publish.Histograms)
		shard := "shard " + strconv.Itoa(in[i].Doc.Shard.K) + " "
		for _, r := range m.Receivers {
			r.Name = shard + r.Name
			out.Receivers = append(out.Receivers, r)
		}
		for _, e := range m.Events {
			e.Receiver = shard + e.Receiver
			out.Events = append(out.Events, e)
		}
		if pr := m.PublishReceivers; pr != nil {
			if recv == nil {
				recv = &report.PublishReceivers{Min: pr.Min, Max: pr.Max}
			}
			sum.add(&recv.Replies, pr.Replies, "messages: publish_receivers")
			sum.add(&recv.Sum, pr.Sum, "messages: publish_receivers")
			recv.Min, recv.Max = min(recv.Min, pr.Min), max(recv.Max, pr.Max)
		}
		if s := m.Stream; s != nil {
			if stream == nil {
				stream = &report.StreamDeliveries{}
			}
			sum.add(&stream.Added, s.Added, "messages: added")
			sum.add(&stream.Acked, s.Acked, "messages: acked")
			sum.add(&stream.Redelivered, s.Redelivered, "messages: redelivered")
			sum.add(&stream.NeverDelivered, s.NeverDelivered, "messages: never_delivered")
		}
		if v := m.Tracking; v != nil {
			if tracking == nil {
				tracking = &report.Invalidations{BCAST: v.BCAST}
			}
			for _, c := range []struct {
				dst *uint64
				v   uint64
				n   string
			}{{&tracking.Pushes, v.Pushes, "pushes"}, {&tracking.Keys, v.Keys, "keys"}, {&tracking.Flushes, v.Flushes, "flushes"},
				{&tracking.Refetches, v.Refetches, "refetches"}, {&tracking.Uncached, v.Uncached, "uncached"},
				{&tracking.StaleAtEnd, v.StaleAtEnd, "stale_at_end"}, {&tracking.Spurious, v.Spurious, "spurious"},
				{&tracking.Forgotten, v.Forgotten, "forgotten"}} {
				sum.add(c.dst, c.v, "messages: tracking: "+c.n)
			}
		}
	}
	if err := sum.err(); err != nil {
		return nil, err
	}
	if recv != nil && recv.Replies > 0 {
		recv.Mean = report.Round(float64(recv.Sum)/float64(recv.Replies), 3)
	}
	out.PublishReceivers = recv
	if out.Expected > 0 {
		out.LossPct = report.Round(100*float64(out.Lost)/float64(out.Expected), 6)
	}
	var err error
	if out.Publish, err = report.MergeLatencies(hs); err != nil {
		return nil, err
	}
	out.Tracking = tracking
	if stream != nil {
		out.Stream = stream
		stream.Lag = report.LagOf(t.Intervals, t)
	}
	return out, nil
}

// mergeIntervalMessages adds the shards' interval messages of one
// interval (nil when none has any).
func mergeIntervalMessages(ivs []report.Interval) *report.IntervalMessages {
	var out *report.IntervalMessages
	for _, iv := range ivs {
		m := iv.Messages
		if m == nil {
			continue
		}
		if out == nil {
			out = &report.IntervalMessages{}
		}
		out.Delivered += m.Delivered
		out.Duplicates += m.Duplicates
		for _, g := range []struct {
			dst **int64
			v   *int64
		}{{&out.Lag, m.Lag}, {&out.Pending, m.Pending}} {
			if g.v == nil {
				continue
			}
			if *g.dst == nil {
				*g.dst = new(int64)
			}
			**g.dst += *g.v
		}
	}
	return out
}
