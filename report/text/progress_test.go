package text

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// TestProgressLine: what a progress line says about a test of a planned
// duration, of a planned number of requests, in warmup, following stages.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	stages, err := timeline.NewStages([]timeline.Stage{{Duration: 10 * time.Second, Target: timeline.RatePerSecond(1000)}})
	if err != nil {
		t.Fatal(err)
	}
	last := scheduler.Progress{Elapsed: 2 * time.Second, Sent: 2000, Completed: 1990}
	now := scheduler.Progress{Elapsed: 3 * time.Second, Sent: 3000, Completed: 2990, Errors: 2, InFlight: 8, OldestAge: 412 * time.Microsecond}
	for _, c := range []struct {
		name string
		l    *scheduler.Live
		now  scheduler.Progress
		want string
	}{
		{"duration", &scheduler.Live{Duration: 5 * time.Second}, now,
			"GET   3.0s/5.0s  sent 1000/s  completed 1000/s  p50 0.250 ms  p99 1.500 ms  in-flight 8  oldest 412 µs  errors 2"},
		{"requests", &scheduler.Live{Requests: 5984}, now,
			"GET   3.0s  50%  sent 1000/s  completed 1000/s  p50 0.250 ms  p99 1.500 ms  in-flight 8  oldest 412 µs  errors 2"},
		// An open run of no count and no length says no share.
		{"unbounded", &scheduler.Live{Requests: 1 << 62}, now,
			"GET   3.0s  sent 1000/s  completed 1000/s  p50 0.250 ms  p99 1.500 ms  in-flight 8  oldest 412 µs  errors 2"},
		{"warmup", &scheduler.Live{Duration: 5 * time.Second, Warmup: 4 * time.Second}, now,
			"GET   3.0s/5.0s warmup  sent 1000/s  completed 1000/s  p50 0.250 ms  p99 1.500 ms  in-flight 8  oldest 412 µs  errors 2"},
		{"stages", &scheduler.Live{Duration: 10 * time.Second, Stages: stages}, now,
			"GET   3.0s/10.0s  target 300/s  sent 1000/s  completed 1000/s  p50 0.250 ms  p99 1.500 ms  in-flight 8  oldest 412 µs  errors 2"},
		// Nothing waiting, and a stall of seconds.
		{"idle", &scheduler.Live{}, scheduler.Progress{Elapsed: 3 * time.Second, Sent: 2000, Completed: 1990}, "GET   3.0s  sent 0/s  completed 0/s  p50 0.250 ms  p99 1.500 ms  in-flight 0  oldest -  errors 0"},
		{"stall", &scheduler.Live{}, scheduler.Progress{Elapsed: 3 * time.Second, Sent: 2000, Completed: 1990, OldestAge: 2500 * time.Millisecond},
			"GET   3.0s  sent 0/s  completed 0/s  p50 0.250 ms  p99 1.500 ms  in-flight 0  oldest 2.50 s  errors 0"},
	} {
		if got := ProgressLine("GET", c.l, last, c.now, 250_000, 1_500_000); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
	if got := age(25 * time.Millisecond); got != "25.0 ms" {
		t.Errorf("age(25ms) = %q", got)
	}
}

// TestConnectionLines: the lines about an open run's connections.
func TestConnectionLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{ConnectionsLine("GET", 1500*time.Millisecond, scheduler.Connections{Open: 48, Of: 50, Lost: 2, Reconnects: 2}, 2),
			"pacer: GET: 2 connections lost by 1.5 s; 48 of 50 open, 2 replaced so far"},
		{ConnectionsLine("GET", time.Second, scheduler.Connections{Open: 0, Of: 1, Lost: 1}, 1),
			"pacer: GET: connection lost by 1.0 s; 0 of 1 open; requests wait for a reconnect"},
		{JoinLine("GET", 3*time.Second, scheduler.NodeJoin{Addr: "127.0.0.1:7004", Open: 2, Of: 2}),
			"pacer: GET: cluster node 127.0.0.1:7004 joined the run by 3.0 s: 2 of 2 connections open"},
		{JoinLine("GET", 3*time.Second, scheduler.NodeJoin{Addr: "127.0.0.1:7004", Of: 2, Err: "dial tcp 127.0.0.1:7004: connect: connection refused\n"}),
			"pacer: GET: cluster node 127.0.0.1:7004 joined the run by 3.0 s and could not be reached (dial tcp 127.0.0.1:7004: connect: connection refused); its requests are errors until a redial reaches it"},
		{JoinLine("GET", 0, scheduler.NodeJoin{Addr: "127.0.0.1:7004\x1b[2J", Of: 2}),
			"pacer: GET: cluster node 127.0.0.1:7004\\x1b[2J joined the run by 0.0 s and could not be reached (no connection opened); its requests are errors until a redial reaches it"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
