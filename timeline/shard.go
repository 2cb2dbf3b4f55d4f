package timeline

import (
	"fmt"
	"math"
)

// Shard is the part of a timeline that shard K of N sends (--shard K/N):
// the requests whose global index i satisfies i mod N = K−1, at their
// global intended times. Its request j is the timeline's request j·N+K−1:
//
//	global i:  0  1  2  3  4  5  6  7 …       N = 3
//	shard 1:   0        1        2            i = 3j
//	shard 2:      0        1        2         i = 3j+1
//	shard 3:         0        1               i = 3j+2
//
// N shards started at the same instant send exactly the timeline's
// requests, each exactly once, whatever its arrival process (uniform,
// Poisson, stages): the offsets come from the global index.
//
// A request bound is global too: openloop.Config.Requests with a Shard
// timeline counts the whole timeline's requests, and the shard sends its
// share of them (Share).
//
// Shard is as safe for concurrent use as the timeline it wraps.
type Shard struct {
	tl   Timeline
	k, n uint64 // 1 ≤ k ≤ n
}

// MaxShards bounds N.
const MaxShards = 1 << 20

var (
	_ Timeline = Shard{}
	_ counter  = Shard{}
	_ forker   = Shard{}
)

// NewShard returns shard k (from 1) of n of tl.
func NewShard(tl Timeline, k, n int) (Shard, error) {
	if n < 1 || n > MaxShards {
		return Shard{}, fmt.Errorf("shard count %d: want 1 to %d", n, MaxShards)
	}
	if k < 1 || k > n {
		return Shard{}, fmt.Errorf("shard %d of %d: want 1 to %d", k, n, n)
	}
	return Shard{tl: tl, k: uint64(k), n: uint64(n)}, nil
}

// K returns the shard's number, from 1.
func (s Shard) K() int { return int(s.k) }

// N returns the number of shards.
func (s Shard) N() int { return int(s.n) }

// Timeline returns the whole timeline the shard is a part of.
func (s Shard) Timeline() Timeline { return s.tl }

// Global returns the timeline index of the shard's request j, and false
// when it is beyond uint64.
func (s Shard) Global(j uint64) (uint64, bool) {
	if j > (math.MaxUint64-(s.k-1))/s.n {
		return 0, false
	}
	return j*s.n + s.k - 1, true
}

// Share returns how many of the timeline's first c requests (indices
// below c) belong to the shard.
func (s Shard) Share(c uint64) uint64 {
	if c < s.k {
		return 0
	}
	return (c-s.k)/s.n + 1
}

// Offset implements Timeline: the offset of the timeline's request
// j·N+K−1.
func (s Shard) Offset(j uint64) int64 {
	i, ok := s.Global(j)
	if !ok {
		return math.MaxInt64
	}
	return s.tl.Offset(i)
}

// Name implements Timeline: the arrival process of the whole timeline.
func (s Shard) Name() string { return s.tl.Name() }

// fork implements forker.
func (s Shard) fork() Timeline { return Shard{tl: Fork(s.tl), k: s.k, n: s.n} }

// Close releases what the timeline it shards holds (a trace's reader).
func (s Shard) Close() { Close(s.tl) }

// countBefore implements counter, exactly: the shard's requests before
// end are its share of the timeline's requests before end. The shard's
// limit-th request is the timeline's (limit−1)·N+K−1, so counting the
// timeline up to that index plus one and taking the share gives at most
// limit. It costs what counting the timeline costs.
func (s Shard) countBefore(end int64, limit uint64) uint64 {
	if limit == 0 || end <= 0 {
		return 0
	}
	globalLimit := uint64(math.MaxUint64)
	if last, ok := s.Global(limit - 1); ok && last < math.MaxUint64 {
		globalLimit = last + 1
	}
	return min(s.Share(CountFrom(s.tl, 0, end, globalLimit)), limit)
}

// RequestLimit turns a bound of n requests on the whole timeline into
// tl's own: n, or a shard's share of n.
func RequestLimit(tl Timeline, n uint64) uint64 {
	if s, ok := tl.(Shard); ok {
		return s.Share(n)
	}
	return n
}

// RequestEnd is the offset where a timeline bounded to n requests ends:
// that of its request n (for a shard, the whole timeline's request n,
// whichever shard it is in). It reads a cursor of its own: a trace's
// timeline read n requests ahead on the pacer's cursor would hold all
// their commands until they are sent.
func RequestEnd(tl Timeline, n uint64) int64 {
	if s, ok := tl.(Shard); ok {
		tl = s.tl
	}
	return Fork(tl).Offset(n)
}

// ShardsOf returns the number of shards tl is split into (1 when it is
// not a shard).
func ShardsOf(tl Timeline) uint64 {
	if s, ok := tl.(Shard); ok {
		return s.n
	}
	return 1
}
