package report

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// msgFixture is a crafted pubsub (or, with lag, stream) run: a publisher
// at rate for seconds in 1 s intervals whose PUBLISH takes 0.1 ms and
// whose messages are delivered after deliverMs to subs subscribers of
// one channel, lost deliveries of them; lag is a stream's lag per
// interval (nil: pubsub).
type msgFixture struct {
	rate      float64
	seconds   int
	subs      int
	deliverMs float64
	lost      uint64
	lag       []int64
}

func pack(t testing.TB, h *hdrhistogram.Histogram) histo.Packed {
	t.Helper()
	p, err := histo.Pack(h)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f msgFixture) run(t testing.TB) MessagesRun {
	t.Helper()
	per := int(f.rate)
	pub := &scheduler.Result{Name: "PUBLISH", Mode: "open", TargetRate: timeline.RatePerSecond(f.rate), Arrival: "uniform", Pacing: "precise",
		Connections: 2, Window: time.Duration(f.seconds) * time.Second, Interval: time.Second, LagLimit: time.Millisecond,
		Response: histo.New(), Service: histo.New(), Lag: histo.New(), Receive: histo.New(), ErrorCodes: map[string]uint64{}}
	m := &messages.Result{Delivery: histo.New(), Service: histo.New(), Receive: histo.New()}
	for s := range f.seconds {
		iv := scheduler.Interval{Start: time.Duration(s) * time.Second, Duration: time.Second,
			Counts: scheduler.Counts{Scheduled: uint64(per), Sent: uint64(per), Completed: uint64(per)}}
		resp, lag := histo.New(), histo.New()
		_ = resp.RecordValues(100_000, int64(per))
		_ = lag.RecordValues(10_000, int64(per))
		iv.Response, iv.Service, iv.Lag = pack(t, resp), pack(t, resp), pack(t, lag)
		pub.Response.Merge(resp)
		pub.Service.Merge(resp)
		pub.Lag.Merge(lag)
		pub.Counts.Add(iv.Counts)
		pub.Intervals = append(pub.Intervals, iv)
		n := int64(per * f.subs)
		if s == f.seconds-1 {
			n -= int64(f.lost)
		}
		d := histo.New()
		_ = d.RecordValues(int64(f.deliverMs*1e6), n)
		m.Delivery.Merge(d)
		m.Service.Merge(d)
		miv := messages.Interval{Start: iv.Start, Duration: time.Second, Delivered: uint64(n), Delivery: pack(t, d), Service: pack(t, d),
			Gauges: messages.Gauges{Lag: -1, Pending: -1}}
		if f.lag != nil {
			miv.Gauges = messages.Gauges{Lag: f.lag[s], Pending: 3}
		}
		m.Intervals = append(m.Intervals, miv)
		m.Delivered += uint64(n)
	}
	// The drain: the publisher's last, partial interval, and the
	// deliveries' after it.
	pub.Intervals = append(pub.Intervals, scheduler.Interval{Start: time.Duration(f.seconds) * time.Second, Duration: 20 * time.Millisecond})
	m.Intervals = append(m.Intervals, messages.Interval{Start: time.Duration(f.seconds) * time.Second, Duration: 50 * time.Millisecond, Gauges: messages.Gauges{Lag: 0, Pending: 0}})
	m.Expected = uint64(per * f.seconds * f.subs)
	m.Lost = f.lost
	m.Reads, m.Stamped = m.Delivered, m.Delivered
	for j := range f.subs {
		rr := messages.ReceiverResult{Name: "subscriber " + string(rune('1'+j)), Channels: "pacer:ch:0", Expected: uint64(per * f.seconds),
			Delivered: uint64(per * f.seconds), Latency: messages.ReceiverLatency()}
		if j == 0 {
			rr.Delivered -= f.lost
			rr.Lost = f.lost
		}
		_ = rr.Latency.RecordValues(int64(f.deliverMs*1e6), int64(rr.Delivered))
		m.Receivers = append(m.Receivers, rr)
	}
	in := MessagesRun{Kind: KindPubSub, Publisher: pub, Messages: m, Channels: 1, Subscribers: f.subs, PayloadBytes: 64,
		Published: uint64(per * f.seconds), Receivers: &PublishReceivers{Replies: uint64(per * f.seconds), Sum: m.Expected, Min: int64(f.subs), Max: int64(f.subs), Mean: float64(f.subs)}}
	if f.lag != nil {
		in.Kind, in.Receivers, in.Groups, in.Consumers = KindStream, nil, 1, f.subs
		in.Stream = &StreamDeliveries{Added: in.Published, Acked: m.Delivered, NeverDelivered: f.lost}
	}
	return in
}

// TestLossClause: a loss clause fails on the loss, owned by the server.
func TestLossClause(t *testing.T) {
	t.Parallel()
	tt, j, err := judgedMessages(msgFixture{rate: 1000, seconds: 2, subs: 2, deliverMs: 1, lost: 7}.run(t), TestOptions{}, mustSLO(t, "loss<=0,p99<10ms", 0))
	if err != nil {
		t.Fatal(err)
	}
	if j.Outcome != "fail" || tt.SLO.Pass || tt.SLO.Clauses[0].Owner != "server" || !tt.SLO.Clauses[1].Pass {
		t.Fatalf("%+v %+v", j, tt.SLO)
	}
	if want := "loss 0.175% > 0.000% (wanted loss<=0)"; tt.SLO.Violations[0] != want {
		t.Errorf("violation %q, want %q", tt.SLO.Violations[0], want)
	}
	if tt.Messages.Receivers[0].Lost != 7 || tt.Messages.LossPct != 0.175 {
		t.Errorf("%+v", tt.Messages)
	}
	if _, err := parseSLO("loss<=2"); err == nil {
		t.Error("loss<=2 is not a share")
	}
}
