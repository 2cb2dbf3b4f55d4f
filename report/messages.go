package report

import (
	"errors"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/stats"
)

// A pubsub or stream test (Messages set) is a test whose latencies are
// its messages' deliveries: its response time is the delivery latency
// (the kernel's receive time of a delivery − the message's intended
// publish instant), its service time the delivery's from the instant the
// publisher queued the message, its send lag the publisher's and its
// receive lag the receivers'; its counts are the publisher's requests
// (PUBLISH or XADD), whose own latencies are in Messages.Publish. Every
// renderer, the SLO and the trust rule then read deliveries where a run
// has replies.

// Kinds of message test.
const (
	KindPubSub   = "pubsub"
	KindStream   = "stream"
	KindTracking = "tracking"
)

// Messages is what a pubsub or stream test's messages did.
type Messages struct {
	// Kind is "pubsub", "stream" or "tracking" (client-side caching:
	// Channels are its keys, Subscribers its readers, a delivery an
	// invalidation).
	Kind string `json:"kind"`
	// Channels are the channels (pubsub) or streams (stream) the
	// messages went to; Subscribers the subscribing connections, with
	// Patterns (PSUBSCRIBE) or Sharded (SSUBSCRIBE, SPUBLISH); Groups and
	// Consumers (per group) a stream's consumer groups.
	Channels     int  `json:"channels"`
	Subscribers  int  `json:"subscribers,omitempty"`
	Patterns     bool `json:"patterns,omitempty"`
	Sharded      bool `json:"sharded,omitempty"`
	Groups       int  `json:"groups,omitempty"`
	Consumers    int  `json:"consumers,omitempty"`
	PayloadBytes int  `json:"payload_bytes"`
	// Published counts the messages the publisher queued (the measured
	// part of the timeline); Expected the deliveries they called for
	// (each message once per subscriber of its channel, once per
	// consumer group of its stream); Delivered the first deliveries;
	// Lost = Expected − Delivered; LossPct its share of Expected.
	Published uint64  `json:"published"`
	Expected  uint64  `json:"expected"`
	Delivered uint64  `json:"delivered"`
	Lost      uint64  `json:"lost"`
	LossPct   float64 `json:"loss_pct"`
	// Duplicates counts deliveries of a message its receiver had already
	// (a stream's redeliveries), Reordered first deliveries after a later
	// message of their channel, Stale deliveries too far behind to tell a
	// duplicate from a late one, Foreign payloads not of this run (not
	// measured), WarmupDelivered the warmup's deliveries.
	Duplicates      uint64 `json:"duplicates"`
	Reordered       uint64 `json:"reordered"`
	Stale           uint64 `json:"stale"`
	Foreign         uint64 `json:"foreign"`
	WarmupDelivered uint64 `json:"warmup_delivered,omitempty"`
	// PublishReceivers is what PUBLISH answered: the subscribers each
	// message reached, as the server counted them (pubsub).
	PublishReceivers *PublishReceivers `json:"publish_receivers,omitempty"`
	// Publish is the publisher's own latencies: PUBLISH's or XADD's
	// reply − intended (response), − write (service), its send lag and
	// receive lag.
	Publish Latencies `json:"publish"`
	// ReceiveClock says what a delivery's time is: "kernel" or "read"
	// (see Test.ReceiveClock).
	ReceiveClock string `json:"receive_clock"`
	// Receivers is each subscriber's or consumer's part, Events what
	// ended one early (the server disconnected it).
	Receivers []Receiver        `json:"receivers"`
	Events    []MessageEvent    `json:"events"`
	Stream    *StreamDeliveries `json:"stream,omitempty"`
	Tracking  *Invalidations    `json:"tracking,omitempty"`
	// ClockErrors counts deliveries whose latency came out negative.
	ClockErrors uint64 `json:"clock_errors,omitempty"`
}

// PublishReceivers sums PUBLISH's replies.
type PublishReceivers struct {
	Replies uint64  `json:"replies"`
	Sum     uint64  `json:"sum"`
	Min     int64   `json:"min"`
	Max     int64   `json:"max"`
	Mean    float64 `json:"mean"`
	// Drops are the replies that counted fewer receivers than any before
	// (a subscriber the server dropped): when, from the test's start.
	Drops []ReceiverDrop `json:"drops,omitempty"`
}

// ReceiverDrop is a fall of PUBLISH's count of receivers.
type ReceiverDrop struct {
	AtS  float64 `json:"at_s"`
	From int64   `json:"from"`
	To   int64   `json:"to"`
}

// Receiver is one subscriber's or consumer's part.
type Receiver struct {
	Name     string `json:"name"`
	Channels string `json:"channels"`
	// Expected and Lost are absent for a stream's consumer (its group
	// accounts for them).
	Expected   uint64 `json:"expected,omitempty"`
	Delivered  uint64 `json:"delivered"`
	Lost       uint64 `json:"lost,omitempty"`
	Duplicates uint64 `json:"duplicates"`
	Reordered  uint64 `json:"reordered"`
	Stale      uint64 `json:"stale,omitempty"`
	Foreign    uint64 `json:"foreign,omitempty"`
	// LatencyMs is its delivery latency, at 2 significant digits.
	LatencyMs *histo.Summary `json:"latency_ms"`
	// EndedAtS is when it stopped receiving before the end (the server
	// disconnected it), from the test's start; absent when it did not.
	EndedAtS *float64 `json:"ended_at_s,omitempty"`
}

// MessageEvent is a receiver that ended early: when, what happened, what
// it had received by then and what it missed (counted lost).
type MessageEvent struct {
	AtS       float64 `json:"at_s"`
	Receiver  string  `json:"receiver"`
	What      string  `json:"what"`
	Delivered uint64  `json:"delivered"`
	Missed    uint64  `json:"missed"`
}

// StreamDeliveries is a stream test's at-least-once accounting and its
// consumers' lag.
type StreamDeliveries struct {
	// Added counts the entries XADD added (measured), Acked the entries
	// XACK acknowledged, Redelivered the deliveries of an entry its group
	// had had already, NeverDelivered the entries a group never got
	// (trimmed by MAXLEN before it read them, or still unread at the
	// end).
	Added          uint64 `json:"added"`
	Acked          uint64 `json:"acked"`
	Redelivered    uint64 `json:"redelivered"`
	NeverDelivered uint64 `json:"never_delivered"`
	// Lag is the consumer groups' backlog through the test.
	Lag *Lag `json:"lag,omitempty"`
}

// Invalidations is a client-side caching test's accounting: the readers'
// invalidation pushes and what they did not measure.
type Invalidations struct {
	// BCAST is set when the readers were subscribed to the key prefix
	// (CLIENT TRACKING on BCAST) instead of tracked by their reads.
	BCAST bool `json:"bcast"`
	// Pushes counts the invalidation pushes read, Keys the keys they
	// named, Flushes those that named none (the server flushed).
	Pushes  uint64 `json:"pushes"`
	Keys    uint64 `json:"keys"`
	Flushes uint64 `json:"flushes"`
	// Refetches counts the readers' reads of an invalidated key (default
	// mode), Uncached the writes that found a reader without a copy
	// (between an invalidation and its refetch: none was due).
	Refetches uint64 `json:"refetches"`
	Uncached  uint64 `json:"uncached"`
	// StaleAtEnd counts the readers' keys left holding a value older than
	// the key's last write, with no invalidation (the lost ones of
	// default mode).
	StaleAtEnd uint64 `json:"stale_at_end"`
	// Spurious counts invalidations with no write of the key outstanding
	// (an eviction, another client's write), Forgotten those of writes
	// too old to date: neither is measured.
	Spurious  uint64 `json:"spurious"`
	Forgotten uint64 `json:"forgotten"`
}

// Lag is the consumers' backlog, read at every interval's end: the
// entries added and not yet delivered (the most of any group), and the
// entries delivered and not yet acknowledged (XPENDING), with
// Mann–Kendall's test for a rising trend over the intervals of the
// timeline (as a sweep's step is judged): Rising at p < Alpha means the
// consumers do not keep up, and the lag grows with the run.
type Lag struct {
	MaxEntries     int64   `json:"max_entries"`
	FinalEntries   int64   `json:"final_entries"`
	MaxPending     int64   `json:"max_pending"`
	Intervals      int     `json:"intervals"`
	S              int     `json:"s"`
	P              float64 `json:"p"`
	Alpha          float64 `json:"alpha"`
	Rising         bool    `json:"rising"`
	GrowthPerS     float64 `json:"growth_per_s"`
	Sustainable    bool    `json:"sustainable"`
	PendingRising  bool    `json:"pending_rising"`
	PendingP       float64 `json:"pending_p"`
	PendingSamples int     `json:"pending_samples"`
}

// IntervalMessages is an interval's deliveries (pubsub and stream tests'
// intervals): the first deliveries and duplicates that arrived in it, and
// a stream's lag and pending entries at its end (absent: not measured).
type IntervalMessages struct {
	Delivered  uint64 `json:"delivered"`
	Duplicates uint64 `json:"duplicates"`
	Lag        *int64 `json:"lag,omitempty"`
	Pending    *int64 `json:"pending,omitempty"`
}

// LagAlpha is the level of the lag's trend test: the sweep's.
const LagAlpha = 0.01

// MessagesRun is what a pubsub or stream run measured, for NewMessagesTest.
type MessagesRun struct {
	Kind string
	// Publisher is the publisher's result (its PUBLISH or XADD replies),
	// Messages the receivers'.
	Publisher *scheduler.Result
	Messages  *messages.Result
	// Shape, as in Messages.
	Channels, Subscribers, Groups, Consumers, PayloadBytes int
	Patterns, Sharded                                      bool
	// Published counts the measured messages queued.
	Published uint64
	// Receivers is PUBLISH's replies (nil for a stream).
	Receivers *PublishReceivers
	// Stream is a stream's at-least-once accounting (nil for pubsub);
	// its Lag is computed here from the intervals.
	Stream *StreamDeliveries
	// Tracking is a client-side caching run's accounting (nil
	// otherwise).
	Tracking *Invalidations
}

// NewMessagesTest makes a pubsub or stream run into a report test whose
// latencies are the deliveries' (see above), as NewTest makes a run's;
// verdict.NewMessagesTest judges it (its SLO with the loss and lag
// clauses, and the trust rule).
func NewMessagesTest(in MessagesRun, o TestOptions) (*Test, error) {
	if in.Publisher == nil || in.Messages == nil {
		return nil, errors.New("a messages test needs its publisher's and its receivers' results")
	}
	m := in.Messages
	r := *in.Publisher
	r.Response, r.Service, r.Receive = m.Delivery, m.Service, m.Receive
	r.Stamped, r.Replies = m.Stamped, m.Reads
	r.ReceiveClock = scheduler.ReceiveRead
	if m.Reads > 0 && float64(m.Stamped) >= 0.99*float64(m.Reads) {
		r.ReceiveClock = scheduler.ReceiveKernel
	}
	r.Clamped += m.Clamped
	ivs, err := deliveryIntervals(in.Publisher.Intervals, m.Intervals)
	if err != nil {
		return nil, err
	}
	r.Intervals = ivs
	t, err := fromResult(&r, true)
	if err != nil {
		return nil, err
	}
	intervalMessages(t.Intervals, m.Intervals)
	pub := in.Publisher
	msgs := &Messages{Kind: in.Kind, Channels: in.Channels, Subscribers: in.Subscribers, Patterns: in.Patterns, Sharded: in.Sharded,
		Groups: in.Groups, Consumers: in.Consumers, PayloadBytes: in.PayloadBytes, Published: in.Published,
		Expected: m.Expected, Delivered: m.Delivered, Lost: m.Lost, Duplicates: m.Duplicates, Reordered: m.Reordered,
		Stale: m.Stale, Foreign: m.Foreign, WarmupDelivered: m.Warmup, PublishReceivers: in.Receivers,
		ReceiveClock: r.ReceiveClock, Receivers: []Receiver{}, Events: []MessageEvent{}, ClockErrors: m.ClockErrors}
	if m.Expected > 0 {
		msgs.LossPct = Round(100*float64(m.Lost)/float64(m.Expected), 6)
	}
	if msgs.Publish, err = newLatencies(latencySet{response: pub.Response, service: pub.Service, lag: pub.Lag, receive: pub.Receive}, true); err != nil {
		return nil, err
	}
	for _, rr := range m.Receivers {
		j := Receiver{Name: rr.Name, Channels: rr.Channels, Expected: rr.Expected, Delivered: rr.Delivered, Lost: rr.Lost,
			Duplicates: rr.Duplicates, Reordered: rr.Reordered, Stale: rr.Stale, Foreign: rr.Foreign, LatencyMs: summary(rr.Latency)}
		if rr.Ended != nil {
			at := Round(rr.Ended.At.Seconds(), 6)
			j.EndedAtS = &at
		}
		msgs.Receivers = append(msgs.Receivers, j)
	}
	for _, e := range m.Events {
		msgs.Events = append(msgs.Events, MessageEvent{AtS: Round(e.At.Seconds(), 6), Receiver: e.Receiver, What: e.What, Delivered: e.Delivered, Missed: e.Missed})
	}
	if in.Tracking != nil {
		inv := *in.Tracking
		msgs.Tracking = &inv
	}
	if in.Stream != nil {
		s := *in.Stream
		msgs.Stream = &s
		msgs.Stream.Lag = lagOf(t.Intervals, &t)
	}
	t.Messages = msgs
	if o.Percentiles || o.CI {
		t.ResponsePercentiles = percentileStats(m.Delivery, o.CI, ciSource{runs: o.Runs, intervals: r.Intervals})
	}
	t.ID = o.ID
	if t.ID == "" {
		t.ID = in.Kind
	}
	attachServer(&t, o.Server)
	return &t, nil
}

// deliveryIntervals puts the deliveries' histograms into the publisher's
// intervals (both series start where the measured window does and share
// the interval's length); deliveries after the publisher's last interval
// join it, so the intervals still add up to the test.
func deliveryIntervals(pub []scheduler.Interval, del []messages.Interval) ([]scheduler.Interval, error) {
	if len(pub) == 0 {
		return nil, nil
	}
	out := make([]scheduler.Interval, len(pub))
	copy(out, pub)
	for i := range out {
		out[i].Response, out[i].Service, out[i].Receive = histo.Packed{}, histo.Packed{}, histo.Packed{}
	}
	for k := 0; k < len(del); k++ {
		i := min(k, len(out)-1)
		d := del[k]
		var err error
		if out[i].Response, err = addPacked(out[i].Response, d.Delivery); err != nil {
			return nil, err
		}
		if out[i].Service, err = addPacked(out[i].Service, d.Service); err != nil {
			return nil, err
		}
		if out[i].Receive, err = addPacked(out[i].Receive, d.Receive); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addPacked is the sum of two packed histograms.
func addPacked(a, b histo.Packed) (histo.Packed, error) {
	if b.Empty() {
		return a, nil
	}
	if a.Empty() {
		return b, nil
	}
	h, err := MergeHist([]histo.Packed{a, b})
	if err != nil {
		return histo.Packed{}, err
	}
	return histo.Pack(h)
}

// intervalMessages puts each delivery interval's counts and gauges into
// the JSON intervals, the same way as deliveryIntervals (the later ones
// into the last).
func intervalMessages(out []Interval, del []messages.Interval) {
	if len(out) == 0 {
		return
	}
	for k, d := range del {
		i := min(k, len(out)-1)
		im := out[i].Messages
		if im == nil {
			im = &IntervalMessages{}
			out[i].Messages = im
		}
		im.Delivered += d.Delivered
		im.Duplicates += d.Duplicates
		if d.Gauges.Lag >= 0 {
			v := d.Gauges.Lag
			im.Lag = &v
		}
		if d.Gauges.Pending >= 0 {
			v := d.Gauges.Pending
			im.Pending = &v
		}
	}
	for i := range out {
		if out[i].Messages == nil {
			out[i].Messages = &IntervalMessages{}
		}
	}
}

// lagOf reads the consumers' lag from a stream test's intervals: its
// largest and last values and its trend over the timeline's full
// intervals (those the publisher sent at least half its planned rate
// into; the drain after the timeline is left out, where the backlog only
// empties).
func lagOf(ivs []Interval, t *Test) *Lag {
	l := &Lag{Alpha: LagAlpha, Sustainable: true, MaxEntries: -1, MaxPending: -1, FinalEntries: -1}
	f := t.mustFigures()
	planned := f.target.PerSecond() * f.interval.Seconds()
	var lag, pend []float64
	for k, iv := range ivs {
		im := iv.Messages
		if im == nil {
			continue
		}
		if im.Lag != nil {
			l.MaxEntries, l.FinalEntries = max(l.MaxEntries, *im.Lag), *im.Lag
		}
		if im.Pending != nil {
			l.MaxPending = max(l.MaxPending, *im.Pending)
		}
		full := k < len(ivs)-1 && exactSeconds(iv.DurationS) == f.interval && iv.Counts.Scheduled > 0 && float64(iv.Counts.Scheduled) >= planned/2
		if !full {
			continue
		}
		if im.Lag != nil {
			lag = append(lag, float64(*im.Lag))
		}
		if im.Pending != nil {
			pend = append(pend, float64(*im.Pending))
		}
	}
	if l.MaxEntries < 0 {
		return nil
	}
	l.Intervals = len(lag)
	l.S, l.P = stats.MannKendall(lag)
	l.Rising = l.P < LagAlpha
	l.Sustainable = !l.Rising
	if n := len(lag); n >= 2 && f.interval > 0 {
		l.GrowthPerS = Round((lag[n-1]-lag[0])/(float64(n-1)*f.interval.Seconds()), 3)
	}
	l.PendingSamples = len(pend)
	_, l.PendingP = stats.MannKendall(pend)
	l.PendingRising = l.PendingP < LagAlpha
	l.P, l.PendingP = roundP(l.P), roundP(l.PendingP)
	return l
}

// roundP keeps a p-value to 4 significant digits.
func roundP(p float64) float64 {
	if p <= 0 {
		return 0
	}
	scale := 1.0
	for p*scale < 1000 {
		scale *= 10
	}
	return float64(int64(p*scale+0.5)) / scale
}
