package messages

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// Result is what a run's receivers measured: facts only. Counts are of
// the measured part of the timeline (messages intended after the
// warmup); a delivery counts once per receiver that got it.
type Result struct {
	// Expected is the deliveries the run should have made: each message
	// the publishers queued, once per receiver (a consumer group counts
	// as one) listening to its channel. Delivered counts the first
	// deliveries; Lost = Expected − Delivered.
	Expected, Delivered, Lost uint64
	// Duplicates counts deliveries of a message already delivered to its
	// receiver (a stream's redeliveries), Reordered first deliveries that
	// came after a later message of their channel, Stale deliveries too
	// far behind to tell (see Window), Foreign payloads of another
	// client or run (not measured), Warmup the warmup's deliveries.
	Duplicates, Reordered, Stale, Foreign, Warmup uint64
	// Delivery (arrival − intended), Service (arrival − queued) and
	// Receive (read − arrival) of the first deliveries, in ns.
	Delivery, Service, Receive *hdrhistogram.Histogram
	// Stamped counts the deliveries whose read carried a kernel receive
	// timestamp, of Reads.
	Stamped, Reads uint64
	// ClockErrors counts deliveries with a negative latency or no
	// arrival: recorded as 0, they make the result suspect.
	ClockErrors uint64
	// Clamped counts samples above the histograms' range.
	Clamped int64
	// Last is the latest arrival, on the clock (0: none).
	Last int64
	// Receivers are each receiver's part, in the order they were made.
	Receivers []ReceiverResult
	// Events are the receivers that ended early, in order.
	Events []Event
	// Intervals is the series (nil when the timeline never started).
	Intervals []Interval
}

// ReceiverResult is one receiver's part of a run.
type ReceiverResult struct {
	Name, Channels string
	// Expected and Lost are what its channels carried for it and what
	// never came (0 where the driver accounts for a group instead).
	Expected, Lost                                         uint64
	Delivered, Duplicates, Reordered, Stale, Foreign, Warm uint64
	// Latency is its delivery latency at 2 significant digits (nil when
	// it had none).
	Latency *hdrhistogram.Histogram
	// Ended is set when it stopped receiving before the end.
	Ended *Event
}

// Finish stops the interval series at end (on the clock) and returns the
// run's facts. expected, when set, gives each receiver's expected
// deliveries (the messages sent on its channels, measured part), from
// which its loss follows; without it (a consumer group's accounting is
// the driver's) Expected and Lost stay 0. Call it once the receivers have
// stopped.
func (m *Meter) Finish(end int64, expected func(*Receiver) uint64) (*Result, error) {
	res := &Result{Delivery: m.Delivery.Snapshot(), Service: m.Service.Snapshot(), Receive: m.Receive.Snapshot()}
	res.Clamped = m.Delivery.Clamped() + m.Service.Clamped() + m.Receive.Clamped()
	m.mu.Lock()
	rs := m.receivers
	events := append([]Event(nil), m.events...)
	m.mu.Unlock()
	for _, r := range rs {
		rr := ReceiverResult{Name: r.Name, Channels: r.Channels, Delivered: r.delivered.Load(), Duplicates: r.duplicates.Load(),
			Stale: r.stale.Load(), Foreign: r.foreign.Load(), Warm: r.warm.Load(), Ended: r.ended}
		for i := range r.tracks {
			rr.Reordered += r.tracks[i].Reordered
		}
		if r.hist.TotalCount() > 0 {
			rr.Latency = r.hist
		}
		if expected != nil {
			rr.Expected = expected(r)
			rr.Lost = rr.Expected - min(rr.Expected, rr.Delivered)
		}
		res.Expected += rr.Expected
		res.Lost += rr.Lost
		res.Delivered += rr.Delivered
		res.Duplicates += rr.Duplicates
		res.Reordered += rr.Reordered
		res.Stale += rr.Stale
		res.Foreign += rr.Foreign
		res.Warmup += rr.Warm
		res.Stamped += r.stamped
		res.Reads += r.reads
		res.ClockErrors += r.clockErrs
		res.Last = max(res.Last, r.last)
		res.Receivers = append(res.Receivers, rr)
	}
	for i := range events {
		for k, r := range rs {
			if r.Name == events[i].Receiver {
				events[i].Missed = res.Receivers[k].Lost
				res.Receivers[k].Ended = &events[i]
			}
		}
	}
	res.Events = events
	if m.series != nil {
		var err error
		if res.Intervals, err = m.series.finish(end); err != nil {
			return res, err
		}
	}
	return res, nil
}

// ReceiverLatency is the geometry of a receiver's own histogram: 1 µs to
// an hour, 2 significant digits.
func ReceiverLatency() *hdrhistogram.Histogram {
	return hdrhistogram.New(receiverLowest, histo.Highest, receiverSigFigs)
}

// Window returns the measured window of the deliveries: from the end of
// the warmup to the later of the timeline's end (timelineEnd, an offset
// from t0) and the last arrival.
func (r *Result) Window(t0 int64, warmup, timelineEnd time.Duration) time.Duration {
	end := timelineEnd
	if r.Last > t0 {
		end = max(end, time.Duration(r.Last-t0))
	}
	return max(0, end-warmup)
}
