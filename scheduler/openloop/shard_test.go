package openloop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// TestShardReportsItsShare: a shard's target rate is its share of the
// timeline's, it follows the timeline's stages, and a fork of a stateful
// shard is independent.
func TestShardReportsItsShare(t *testing.T) {
	sh, _ := timeline.NewShard(timeline.Uniform{Rate: timeline.RatePerSecond(9000)}, 2, 3)
	if r := targetRate(Config{Timeline: sh, Rate: timeline.RatePerSecond(9000)}); r.PerSecond() != 3000 {
		t.Errorf("target rate %v, want 3000", r.PerSecond())
	}
	list, _ := timeline.ParseStages("1s:6k")
	st, _ := timeline.NewStages(list)
	ssh, _ := timeline.NewShard(timeline.NewStagedPoisson(st, 1), 1, 2)
	if timeline.StagesOf(ssh) != st {
		t.Error("StagesOf does not see through the shard")
	}
	if r := targetRate(Config{Timeline: ssh, Duration: time.Second}); r.PerSecond() != 1500 {
		t.Errorf("staged target rate %v, want 1500 (half the mean 3000)", r.PerSecond())
	}
	f := timeline.Fork(ssh).(timeline.Shard)
	if f.Timeline() == ssh.Timeline() {
		t.Error("the fork shares the Poisson cursor")
	}
	for j := uint64(0); j < 50; j++ {
		if f.Offset(j) != ssh.Offset(j) {
			t.Fatalf("fork differs at %d", j)
		}
	}
	if sh.Name() != "uniform" || ssh.Name() != "poisson" {
		t.Errorf("names %q %q", sh.Name(), ssh.Name())
	}
}

// TestShardedRunsAddUp: three shards of one count-bounded timeline, run
// at once from one start instant, schedule and complete exactly the
// timeline's requests, each at its global intended time.
func TestShardedRunsAddUp(t *testing.T) {
	t.Parallel()
	cmds := make([]scheduler.Commands, 3)
	var n int
	for i := range cmds {
		cmds[i], n = drivertest.PingStream(t)
	}
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	rate := timeline.RatePerSecond(3000)
	start := scheduler.Now() + int64(200*time.Millisecond)
	results := make([]*scheduler.Result, 3)
	errs := make([]error, 3)
	shards := make([]timeline.Timeline, 3)
	var wg sync.WaitGroup
	for k := 1; k <= 3; k++ {
		sh, err := timeline.NewShard(timeline.Uniform{Rate: rate}, k, 3)
		if err != nil {
			t.Fatal(err)
		}
		shards[k-1] = sh
		conns := srv.Dial(t, 2, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[k-1], errs[k-1] = Run(context.Background(), conns, cmds[k-1], Config{
				Timeline: sh, Rate: rate, Requests: 301, Start: start, Interval: 20 * time.Millisecond,
			})
		}()
	}
	wg.Wait()
	var total scheduler.Counts
	for k, res := range results {
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		if res.T0 != start {
			t.Errorf("shard %d started at %d, want %d", k+1, res.T0, start)
		}
		// The first write is never before the first request was due, nor
		// later than its send lag after that.
		due := start + shards[k].Offset(0)
		if fw := res.FirstWrite; fw < due || fw > due+res.Lag.Max() {
			t.Errorf("shard %d first wrote %d ns after its first request was due, its largest send lag %d ns", k+1, fw-due, res.Lag.Max())
		}
		if want := []uint64{101, 100, 100}[k]; res.Counts.Scheduled != want || res.Counts.Completed != want {
			t.Errorf("shard %d: counts %+v, want %d scheduled and completed", k+1, res.Counts, want)
		}
		if got := res.TargetRate.PerSecond(); got != 1000 {
			t.Errorf("shard %d: target rate %v, want 1000", k+1, got)
		}
		var sched uint64
		for _, iv := range res.Intervals {
			sched += iv.Counts.Scheduled
		}
		if sched != res.Counts.Scheduled {
			t.Errorf("shard %d: intervals schedule %d of %d", k+1, sched, res.Counts.Scheduled)
		}
		total.Add(res.Counts)
	}
	if total.Scheduled != 301 || total.Completed != 301 || srv.Received() != 301 {
		t.Fatalf("together %+v, the server received %d; want 301", total, srv.Received())
	}
}

// TestStopWhileWaitingForTheStart: a stop during the wait for a start
// instant ends the run at once, with nothing sent.
func TestStopWhileWaitingForTheStart(t *testing.T) {
	cmds, n := drivertest.PingStream(t)
	srv := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return drivertest.Pong, false })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	res, err := Run(ctx, srv.Dial(t, 1, 0), cmds, Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(1000)}, Duration: time.Second,
		Start: scheduler.Now() + int64(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Counts.Scheduled != 0 || res.Counts.Sent != 0 || !res.Counts.Balanced() {
		t.Fatalf("interrupted %v, counts %+v: want an interrupted run that scheduled nothing", res.Interrupted, res.Counts)
	}
}
