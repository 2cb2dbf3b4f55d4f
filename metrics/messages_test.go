package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/messages"
)

// TestWatchMessages: a run's deliveries are served with the publisher's
// labels, live and after the run ended (counters kept), and a run again
// under the same labels adds to them.
func TestWatchMessages(t *testing.T) {
	t.Parallel()
	c := NewCollector(nil)
	c.SetScope("127.0.0.1:6379", "")
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	run := func(n uint64) func() {
		m := messages.NewMeter(messages.MeterConfig{Run: 1})
		m.Begin(1)
		r := m.NewReceiver("s", "c", 1)
		for i := range n {
			r.Deliver(r.Track(0), i, messages.Header{Run: 1, Seq: i, Intended: 1000, Sent: 1000}, conn.Times{Arrival: 2_001_000, Read: 2_001_000})
		}
		r.Deliver(r.Track(0), 0, messages.Header{Run: 1, Intended: 1000, Sent: 1000}, conn.Times{Arrival: 2_001_000, Read: 2_001_000})
		r.Deliver(r.Track(0), 0, messages.Header{Run: 9}, conn.Times{})
		end := c.WatchMessages("PUBLISH x", ModeOpen, m)
		return func() {
			end()
			if _, err := m.Finish(3_000_000, nil); err != nil {
				t.Error(err)
			}
		}
	}
	end := run(10)
	fams := scrape(t, reg, "text/plain")
	if v := fams["pacer_messages_delivered_total"].GetMetric()[0].GetCounter().GetValue(); v != 10 {
		t.Errorf("delivered %v", v)
	}
	if v := fams["pacer_messages_duplicates_total"].GetMetric()[0].GetCounter().GetValue(); v != 1 {
		t.Errorf("duplicates %v", v)
	}
	h := fams["pacer_delivery_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 10 || h.GetSampleSum() < 0.0199 || h.GetSampleSum() > 0.0201 {
		t.Errorf("delivery histogram: %d samples summing to %v s", h.GetSampleCount(), h.GetSampleSum())
	}
	if _, ok := fams["pacer_consumer_lag_entries"]; ok {
		t.Error("a pubsub run has no lag")
	}
	end()
	run(5)()
	fams = scrape(t, reg, "text/plain")
	if v := fams["pacer_messages_delivered_total"].GetMetric()[0].GetCounter().GetValue(); v != 15 {
		t.Errorf("after two runs, delivered %v", v)
	}
	if v := fams["pacer_messages_foreign_total"].GetMetric()[0].GetCounter().GetValue(); v != 2 {
		t.Errorf("foreign %v", v)
	}
}
