package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
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

// TestMessagesTest: a messages test's latencies are its deliveries', the
// publisher's own are kept apart, its intervals hold the deliveries, and
// it reads back and renders the same.
func TestMessagesTest(t *testing.T) {
	t.Parallel()
	tt, j, err := judgedMessages(msgFixture{rate: 1000, seconds: 3, subs: 4, deliverMs: 2}.run(t), TestOptions{}, mustSLO(t, "p99<=5ms,loss<=0", 0))
	if err != nil {
		t.Fatal(err)
	}
	if j.Outcome != "pass" || !tt.SLO.Pass || tt.SLO.Clauses[0].Basis != "delivery" {
		t.Fatalf("judged %+v, slo %+v", j, tt.SLO)
	}
	if tt.ResponseMs.P99 < 1.99 || tt.ResponseMs.P99 > 2.01 || tt.Messages.Publish.ResponseMs.P99 > 0.11 {
		t.Errorf("delivery p99 %v, publish p99 %v", tt.ResponseMs.P99, tt.Messages.Publish.ResponseMs.P99)
	}
	if tt.Messages.Delivered != 12000 || tt.Messages.Lost != 0 || len(tt.Intervals) != 4 || tt.Intervals[0].Messages.Delivered != 4000 || tt.Intervals[0].ResponseMs.Count != 4000 {
		t.Errorf("messages %+v, intervals %d, first %+v", tt.Messages, len(tt.Intervals), tt.Intervals[0].Messages)
	}
	doc := craftDoc("pubsub", *tt)
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadInput("x", b)
	if err != nil {
		t.Fatal(err)
	}
	var live, back bytes.Buffer
	if err := Text(&live, tt, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Text(&back, &in.Doc.Tests[0], TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if live.String() != back.String() {
		t.Errorf("read back renders differently:\n%s\n---\n%s", live.String(), back.String())
	}
	testrun.Contains(t, live.String(), "deliveries     expected 12000 = delivered 12000 + lost 0", "delivery ", "publish ",
		"receivers      mean 4.00 per message", "per subscriber", "slo: pass")
	var q bytes.Buffer
	if err := Quiet(&q, tt, TextOptions{}); err != nil || !strings.Contains(q.String(), "delivery p50=2.001 msec") || !strings.Contains(q.String(), "lost 0 of 12000") {
		t.Errorf("quiet: %q %v", q.String(), err)
	}
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

// TestLagClause: a stream's lag that rises through the run fails a lag
// clause even under its bound, and says unsustainable; a flat one
// passes; the drain's interval is left out of the trend.
func TestLagClause(t *testing.T) {
	t.Parallel()
	rising := []int64{0, 200, 400, 600, 800, 1000}
	flat := []int64{3, 0, 5, 1, 2, 4}
	for _, c := range []struct {
		name   string
		lag    []int64
		slo    string
		pass   bool
		rising bool
	}{
		{"rising past the bound", rising, "lag<=500", false, true},
		{"rising under the bound", rising, "lag<=100000", false, true},
		{"flat", flat, "lag<=10", true, false},
		{"flat over the bound", flat, "lag<=4", false, false},
	} {
		tt, j, err := judgedMessages(msgFixture{rate: 1000, seconds: 6, subs: 2, deliverMs: 1, lag: c.lag}.run(t), TestOptions{}, mustSLO(t, c.slo, 0))
		if err != nil {
			t.Fatal(err)
		}
		l := tt.Messages.Stream.Lag
		if tt.SLO.Pass != c.pass || l.Rising != c.rising || l.Sustainable == c.rising || l.Intervals != 6 {
			t.Errorf("%s: slo %+v lag %+v", c.name, tt.SLO, l)
		}
		if !c.pass && (j.Outcome != "fail" || tt.SLO.Clauses[0].Owner != "server") {
			t.Errorf("%s: %+v", c.name, j)
		}
		if c.rising && !strings.Contains(tt.SLO.Violations[0], "unsustainable") {
			t.Errorf("%s: %q", c.name, tt.SLO.Violations[0])
		}
		var b bytes.Buffer
		if err := Text(&b, tt, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if c.rising != strings.Contains(b.String(), "RISING") {
			t.Errorf("%s: text:\n%s", c.name, b.String())
		}
	}
}

// TestMergeMessages: two shards' messages add up, receivers keep their
// shard, and the merged test judges its loss again.
func TestMergeMessages(t *testing.T) {
	t.Parallel()
	var in []MergeInput
	for k := 1; k <= 2; k++ {
		tt, err := NewMessagesTest(msgFixture{rate: 500, seconds: 2, subs: 2, deliverMs: float64(k), lost: uint64(k)}.run(t), TestOptions{ID: "pubsub"})
		if err != nil {
			t.Fatal(err)
		}
		tt.StartedAt = "2030-01-01T00:00:10Z"
		d := craftDoc("pubsub", *tt)
		d.Config = map[string]any{"connections": 2.0, "rate": 1000.0}
		d.Shard = &Shard{K: k, N: 2}
		b, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadInput("x", b)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, MergeInput{Label: "s" + string(rune('0'+k)), Doc: got.Doc})
	}
	out, err := Merge(in, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := out.Tests[0].Messages
	if out.Mode != "pubsub" || m.Expected != 4000 || m.Lost != 3 || m.Delivered != 3997 || len(m.Receivers) != 4 || m.Receivers[2].Name != "shard 2 subscriber 1" ||
		m.PublishReceivers.Sum != 4000 || out.Tests[0].ResponseMs.Count != 3997 || out.Tests[0].Intervals[0].Messages.Delivered != 2000 {
		t.Errorf("merged %+v", m)
	}
	in[1].Doc.Mode = "stream"
	if _, err := Merge(in, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "a pubsub result") {
		t.Errorf("a pubsub and a stream shard: %v", err)
	}
}
