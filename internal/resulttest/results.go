package resulttest

import (
	"time"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/visibility"
)

// Sample builds a deterministic open run of 10,003 requests at 10k/s:
// response times 1..10 ms uniform, service half of that, send lag
// 10-19 µs; 2 errors (ERR and WRONGTYPE), 2 timeouts and 1 unsent.
func Sample() *scheduler.Result {
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	for i := int64(1); i <= 10000; i++ {
		resp.Record(i * 1000)
		serv.Record(i * 500)
		lag.Record(10000 + i%10*1000)
	}
	rate, _ := timeline.ParseRate("10k")
	return &scheduler.Result{
		Name: "SET", Mode: "open", TargetRate: rate, Arrival: "uniform", Pacing: "precise",
		Connections: 50,
		Counts:      scheduler.Counts{Scheduled: 10003, Sent: 10002, Completed: 9998, Errors: 2, Timeouts: 2, Unsent: 1},
		Window:      time.Second + 250*time.Microsecond,
		Response:    resp.Snapshot(), Service: serv.Snapshot(), Lag: lag.Snapshot(),
		ErrorCodes: map[string]uint64{"ERR": 1, "WRONGTYPE": 1},
		FirstError: "ERR",
		LagLimit:   time.Millisecond,
	}
}

// BenchSample is a closed-loop result with a redis-benchmark-geometry
// histogram of known values.
func BenchSample() *scheduler.Result {
	r := histo.NewRecorderGeometry(10, 3000000, 3)
	for i := int64(1); i <= 2000; i++ {
		r.Record(150 + i%7*40 + i/1000*900) // 0.15–2.1 ms
	}
	ns := histo.NewRecorder()
	ns.Record(1)
	return &scheduler.Result{
		Name: "SET", Mode: "closed", Connections: 50,
		Counts: scheduler.Counts{Scheduled: 2000, Sent: 2000, Completed: 2000},
		Window: 25 * time.Millisecond, Micros: r.Snapshot(), Response: ns.Snapshot(), Service: ns.Snapshot(),
	}
}

// evMs is a millisecond in ns.
const evMs = int64(time.Millisecond)

// WithTopology is Sample with a failover event whose writes were
// unavailable for 120 ms, a slot move that cost nothing, visibility
// probes on two replicas and WAITs, over three intervals.
func WithTopology() *scheduler.Result {
	r := Sample()
	r.Interval = 500 * time.Millisecond
	r.Intervals = []scheduler.Interval{{Start: 0, Duration: 500 * time.Millisecond}, {Start: 500 * time.Millisecond, Duration: 500 * time.Millisecond},
		{Start: time.Second, Duration: 250 * time.Microsecond}}
	r.EventBound = 2 * time.Millisecond
	r.Events = []events.Event{
		{Kind: events.Failover, At: 600 * evMs, Last: 610 * evMs, Nodes: []string{"127.0.0.1:7001", "127.0.0.1:7002"},
			Errors: map[string]uint64{"READONLY": 3}, Seen: []string{"+switch-master", "READONLY"}, Detail: "m: 127.0.0.1:7001 -> 127.0.0.1:7002",
			Write: &events.Window{Start: 580 * evMs, End: 700 * evMs, Failed: 3, Worst: 45 * evMs}, Read: &events.Window{Start: 600 * evMs, End: 600 * evMs}},
		{Kind: events.SlotsMoved, At: 900 * evMs, Last: 900 * evMs, Nodes: []string{"127.0.0.1:7002"}, Slots: []events.SlotRange{{Lo: 0, Hi: 99}, {Lo: 200, Hi: 200}},
			Write: &events.Window{Start: 900 * evMs, End: 900 * evMs}},
	}
	lag := func(base int64) *histo.Recorder {
		h := histo.NewRecorder()
		for i := int64(1); i <= 100; i++ {
			h.Record(base * i)
		}
		return h
	}
	a, b := lag(10_000), lag(3_000_000)
	r.Visibility = &visibility.Result{Rate: 100, Probes: 100, Write: lag(1000).Snapshot(), Interval: r.Interval, Replicas: []visibility.Replica{
		{Addr: "127.0.0.1:7003", Seen: 100, Lag: a.Snapshot()}, {Addr: "127.0.0.1:7004", Seen: 99, Lost: 1, Lag: b.Snapshot()}}}
	r.Wait = &scheduler.WaitResult{Wait: scheduler.Wait{Replicas: 1, Timeout: 100 * time.Millisecond}, Sent: 5000, Acked: 4990, Short: 10,
		Latency: lag(50_000).Snapshot()}
	return r
}
