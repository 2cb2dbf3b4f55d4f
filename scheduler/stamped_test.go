package scheduler

import (
	"context"
	"testing"
	"time"
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
	s := newFakeServer(t, 14, func(int) ([]byte, bool) { return pong, false })
	for _, shards := range []int{1, 3} {
		rate := RatePerSecond(5000)
		var tl Timeline = Uniform{Rate: rate}
		whole := tl
		if shards > 1 {
			sh, err := NewShard(tl, 2, shards)
			if err != nil {
				t.Fatal(err)
			}
			tl = sh
		}
		st := &stamps{cmd: []byte("*1\r\n$4\r\nPING\r\n")}
		res, err := RunOpen(context.Background(), s.dial(t, 2, 0), st, OpenConfig{Timeline: tl, Rate: rate, Requests: 600, HiccupInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		if st.begun != 1 || res.Counts.Sent != uint64(len(st.index)) || len(st.index) != 600/shards {
			t.Fatalf("%d shards: begun %d, %d stamped, %d sent", shards, st.begun, len(st.index), res.Counts.Sent)
		}
		for k, i := range st.index {
			g, _ := Shard{tl: whole, k: 2, n: uint64(shards)}.Global(i)
			if shards == 1 {
				g = i
			}
			if i != uint64(k) || st.intended[k] != st.t0+whole.Offset(g) || st.now[k] < st.intended[k] || st.now[k]-st.intended[k] > int64(time.Minute) {
				t.Fatalf("%d shards: stamp %d: index %d intended %d (t0 %d, offset %d) now %d", shards, k, i, st.intended[k], st.t0, whole.Offset(g), st.now[k])
			}
		}
	}
}
