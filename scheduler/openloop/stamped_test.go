package openloop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// stamps is a Stamper that records what the pacer told it.
type stamps struct {
	cmd      []byte
	t0       int64
	begun    int
	index    []uint64
	intended []int64
	now      []int64
}

func (s *stamps) Begin(t0 int64) { s.t0, s.begun = t0, s.begun+1 }
func (s *stamps) Stamp(i uint64, intended, now int64) {
	if s.begun == 0 {
		panic("Stamp before Begin")
	}
	s.index, s.intended, s.now = append(s.index, i), append(s.intended, intended), append(s.now, now)
}
func (s *stamps) Next() ([]byte, uint32) { return s.cmd, 0 }

// TestStamperSeesEveryQueuedRequest: the pacer tells a Stamper the
// timeline's start once, then each request's index (the shard's own),
// its intended instant and the wake that queued it, right before taking
// its command; every request sent was stamped, in order.
func TestStamperSeesEveryQueuedRequest(t *testing.T) {
	t.Parallel()
	s := drivertest.NewServer(t, 14, func(int) ([]byte, bool) { return drivertest.Pong, false })
	for _, shards := range []int{1, 3} {
		rate := timeline.RatePerSecond(5000)
		var tl timeline.Timeline = timeline.Uniform{Rate: rate}
		whole := tl
		if shards > 1 {
			sh, err := timeline.NewShard(tl, 2, shards)
			if err != nil {
				t.Fatal(err)
			}
			tl = sh
		}
		st := &stamps{cmd: []byte("*1\r\n$4\r\nPING\r\n")}
		res, err := Run(context.Background(), s.Dial(t, 2, 0), st, Config{Timeline: tl, Rate: rate, Requests: 600, HiccupInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		if st.begun != 1 || res.Counts.Sent != uint64(len(st.index)) || len(st.index) != 600/shards {
			t.Fatalf("%d shards: begun %d, %d stamped, %d sent", shards, st.begun, len(st.index), res.Counts.Sent)
		}
		for k, i := range st.index {
			g := i
			if shards > 1 {
				sh, _ := timeline.NewShard(whole, 2, shards)
				g, _ = sh.Global(i)
			}
			if i != uint64(k) || st.intended[k] != st.t0+whole.Offset(g) || st.now[k] < st.intended[k] || st.now[k]-st.intended[k] > int64(time.Minute) {
				t.Fatalf("%d shards: stamp %d: index %d intended %d (t0 %d, offset %d) now %d", shards, k, i, st.intended[k], st.t0, whole.Offset(g), st.now[k])
			}
		}
	}
}

// TestOnIntegerSeesIntegerReplies: the value of every measured integer
// reply reaches OnInteger (PUBLISH's receivers); closedloop's test of the
// same name checks the closed loop.
func TestOnIntegerSeesIntegerReplies(t *testing.T) {
	t.Parallel()
	s := drivertest.NewServer(t, 14, func(k int) ([]byte, bool) {
		if k%2 == 0 {
			return []byte(":-3\r\n"), false
		}
		return []byte(":10\r\n"), false
	})
	var sum, n atomic.Int64
	on := func(v int64) { sum.Add(v); n.Add(1) }
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	res, err := Run(context.Background(), s.Dial(t, 1, 0), scheduler.Fixed(ping), Config{Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Requests: 100, HiccupInterval: -1, OnInteger: on})
	if err != nil || res.Counts.Completed != 100 || n.Load() != 100 || sum.Load() != 50*7 {
		t.Fatalf("open: %v, %d completed, %d integers summing to %d", err, res.Counts.Completed, n.Load(), sum.Load())
	}
}
