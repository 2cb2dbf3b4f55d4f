package visibility

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPausedReplicaLags: probes at 100/s on a primary with two replicas,
// one of them frozen for 300 ms: every probe is seen on both (none lost),
// and the frozen replica's lag reaches the freeze (a probe written as it
// began cannot be seen before it ends), with at least ten of its probes
// over 100 ms (those written in the freeze's first 200 ms: no stall of
// the machine makes them faster).
func TestPausedReplicaLags(t *testing.T) {
	testrun.SkipShort(t, "starts a primary with two replicas and probes them for 2 s")
	testrun.SkipRace(t, "the lags of the frozen replica against the other's")
	set := redistest.StartReplicated(t, 2)
	cfg := Config{Rate: 100, Now: clock.Now, Replicas: []string{set.Replicas[0].Addr, set.Replicas[1].Addr},
		Primary: func() conn.Options { return conn.Options{Addr: set.Primary.Addr} },
		Replica: func(a string) conn.Options { return conn.Options{Addr: a} }}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Begin(clock.Now())
	time.Sleep(700 * time.Millisecond)
	if err := set.Replicas[1].PauseFor(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	res := p.Stop()
	if res == nil || len(res.Replicas) != 2 || res.Probes < 150 || res.WriteErrors != 0 {
		t.Fatalf("result %+v", res)
	}
	slow := [2]int64{}
	for i, r := range res.Replicas {
		if r.Lost != 0 || r.Seen+5 < res.Probes || r.Lag.TotalCount() != int64(r.Seen) {
			t.Errorf("replica %s: seen %d, lost %d of %d probes, %d lags", r.Addr, r.Seen, r.Lost, res.Probes, r.Lag.TotalCount())
		}
		var n int64
		for _, iv := range r.Intervals {
			n += iv.Lag.Summary.Count
		}
		if n != r.Lag.TotalCount() {
			t.Errorf("replica %s: its intervals hold %d lags of %d", r.Addr, n, r.Lag.TotalCount())
		}
		for _, b := range r.Lag.Distribution() {
			if b.From >= int64(100*time.Millisecond) {
				slow[i] += b.Count
			}
		}
	}
	if m := res.Replicas[1].Lag.Max(); m < int64(250*time.Millisecond) {
		t.Errorf("the frozen replica's largest lag is %v, less than its freeze", time.Duration(m))
	}
	if slow[1] < 10 {
		t.Errorf("lags over 100 ms: %d on the frozen replica, want at least 10", slow[1])
	}
	if again := p.Stop(); again != nil {
		t.Error("a second Stop returned a result")
	}
}
