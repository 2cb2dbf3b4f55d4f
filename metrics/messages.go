package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/messages"
)

// A pubsub or stream test's deliveries, beside its publisher's requests
// (the same labels): what its subscribers or consumers received, their
// delivery latency, and a stream's lag, read at scrape time from the
// run's messages.Meter.

var (
	descDelivered  = desc("pacer_messages_delivered_total", "Messages delivered to a subscriber or consumer group: first deliveries of the measured timeline, once per receiver.")
	descDuplicates = desc("pacer_messages_duplicates_total", "Deliveries of a message its receiver had already (a stream's redeliveries).")
	descForeign    = desc("pacer_messages_foreign_total", "Payloads on the run's channels that another client or run sent (not measured).")
	descEnded      = desc("pacer_receivers_ended", "Subscribers or consumers that stopped receiving before the end (the server disconnected them).")
	descLag        = desc("pacer_consumer_lag_entries", "Entries added to the streams and not yet delivered, the most of any consumer group (stream tests; absent once ended).")
	descPending    = desc("pacer_consumer_pending_entries", "Entries delivered and not yet acknowledged (XPENDING), the most of any consumer group, as last read (stream tests; absent once ended).")
	descDelivery   = desc("pacer_delivery_seconds", "Delivery latency: the kernel's receive time of a delivery minus the message's intended publish instant.")
)

// msgSeries is one test's deliveries: what its ended runs added up to
// and the run in progress.
type msgSeries struct {
	key
	mu   sync.Mutex
	base msgSnap
	live *messages.Meter
}

// msgSnap is a test's cumulative deliveries at one moment.
type msgSnap struct {
	totals   messages.Totals
	delivery hist
}

func readMessages(m *messages.Meter, bounds []int64) msgSnap {
	return msgSnap{totals: m.Totals(), delivery: readHist(m.Delivery, bounds)}
}

func (s *msgSnap) add(o msgSnap) {
	s.totals.Delivered += o.totals.Delivered
	s.totals.Duplicates += o.totals.Duplicates
	s.totals.Foreign += o.totals.Foreign
	s.totals.Ended += o.totals.Ended
	s.delivery.add(o.delivery)
}

// WatchMessages starts exposing a pubsub or stream run's deliveries under
// the labels test and mode, as Watch exposes its publisher. Call the
// returned end once the run's receivers have stopped.
func (c *Collector) WatchMessages(test, mode string, m *messages.Meter) (end func()) {
	c.mu.Lock()
	k := key{labelValue(test), mode, c.target, c.shard}
	if c.msgByKey == nil {
		c.msgByKey = map[key]*msgSeries{}
	}
	s := c.msgByKey[k]
	if s == nil {
		s = &msgSeries{key: k}
		c.msgByKey[k] = s
		c.msgSeries = append(c.msgSeries, s)
	}
	bounds := c.bounds
	c.mu.Unlock()
	s.mu.Lock()
	if s.live != nil {
		s.base.add(readMessages(s.live, bounds))
	}
	s.live = m
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.live == m {
				s.base.add(readMessages(m, bounds))
				s.live = nil
			}
			s.mu.Unlock()
		})
	}
}

// WatchMessages is Collector.WatchMessages on the server's collector; on
// a nil Exporter (no --metrics-addr) it exposes nothing.
func (s *Exporter) WatchMessages(test, mode string, m *messages.Meter) (end func()) {
	if s == nil {
		return func() {}
	}
	return s.Collector.WatchMessages(test, mode, m)
}

var messageDescs = []*prometheus.Desc{descDelivered, descDuplicates, descForeign, descEnded, descLag, descPending, descDelivery}

// collectMessages sends every message test's numbers.
func (c *Collector) collectMessages(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	all := append([]*msgSeries{}, c.msgSeries...)
	c.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		snap := s.base
		var g messages.Gauges
		live := s.live != nil
		if live {
			snap = msgSnap{}
			snap.add(s.base)
			snap.add(readMessages(s.live, c.bounds))
			g = s.live.Gauges()
		}
		s.mu.Unlock()
		lv := s.values()
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
		}
		counter(descDelivered, snap.totals.Delivered)
		counter(descDuplicates, snap.totals.Duplicates)
		counter(descForeign, snap.totals.Foreign)
		ch <- prometheus.MustNewConstMetric(descEnded, prometheus.GaugeValue, float64(snap.totals.Ended), lv...)
		if live && g.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(g.Lag), lv...)
		}
		if live && g.Pending >= 0 {
			ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(g.Pending), lv...)
		}
		if snap.delivery.ok {
			ch <- constHistogram(descDelivery, snap.delivery, c.le, lv)
		}
	}
}
