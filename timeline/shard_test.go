package timeline

import (
	"math"
	"slices"
	"testing"
	"time"
)

// shardCase is a timeline to split into shards: make builds a fresh one
// (stateful timelines keep a cursor), end bounds the window looked at.
type shardCase struct {
	name string
	make func(t *testing.T) Timeline
	end  int64
}

func shardCases() []shardCase {
	stages := func(t *testing.T, spec string) *Stages {
		t.Helper()
		list, err := ParseStages(spec)
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewStages(list)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	return []shardCase{
		// A rate whose period is not a whole number of ns: the floors matter.
		{"uniform 3k/s", func(*testing.T) Timeline { return Uniform{Rate: RatePerSecond(3000)} }, int64(time.Second)},
		{"uniform 7/s", func(*testing.T) Timeline { return Uniform{Rate: RatePerSecond(7)} }, int64(3 * time.Second)},
		// A rate above 1 per ns: several requests share an offset.
		{"uniform 1000M/s", func(*testing.T) Timeline { return Uniform{Rate: RatePerSecond(1e9)} }, 5000},
		{"poisson 5k/s seed 1", func(*testing.T) Timeline { return NewPoisson(RatePerSecond(5000), 1) }, int64(time.Second)},
		{"poisson 20k/s seed 42", func(*testing.T) Timeline { return NewPoisson(RatePerSecond(20000), 42) }, int64(500 * time.Millisecond)},
		{"stages ramp up and down", func(t *testing.T) Timeline { return stages(t, "1s:10k,500ms:10k,1s:0") }, int64(2500 * time.Millisecond)},
		{"stages with a step", func(t *testing.T) Timeline { return stages(t, "0s:2k,300ms:2k,0s:9k,300ms:9k") }, int64(600 * time.Millisecond)},
		{"staged poisson", func(t *testing.T) Timeline { return NewStagedPoisson(stages(t, "1s:8k,1s:1k"), 7) }, int64(2 * time.Second)},
	}
}

// TestShardsAreTheTimeline: for every arrival process and every N, the N
// shards' offsets together are exactly the single timeline's, each once,
// and their counts add up to its count at every instant.
func TestShardsAreTheTimeline(t *testing.T) {
	for _, tc := range shardCases() {
		t.Run(tc.name, func(t *testing.T) {
			whole := tc.make(t)
			var want []int64
			for i := uint64(0); ; i++ {
				off := whole.Offset(i)
				if off >= tc.end {
					break
				}
				want = append(want, off)
			}
			if len(want) < 20 {
				t.Fatalf("only %d requests: a weak case", len(want))
			}
			total := Count(tc.make(t), tc.end, math.MaxUint64)
			if total != uint64(len(want)) {
				t.Fatalf("Count = %d, the walk %d", total, len(want))
			}
			for _, n := range []int{1, 2, 3, 7, 64} {
				got := make([]int64, len(want))
				seen := make([]bool, len(want))
				var sum uint64
				for k := 1; k <= n; k++ {
					sh, err := NewShard(tc.make(t), k, n)
					if err != nil {
						t.Fatal(err)
					}
					for j := uint64(0); ; j++ {
						off := sh.Offset(j)
						if off >= tc.end {
							break
						}
						i, _ := sh.Global(j)
						if i >= uint64(len(want)) || seen[i] {
							t.Fatalf("N=%d K=%d: request %d (global %d) is not the timeline's, or twice", n, k, j, i)
						}
						seen[i], got[i] = true, off
					}
					c := Count(sh, tc.end, math.MaxUint64)
					if c != sh.Share(total) {
						t.Errorf("N=%d K=%d: Count = %d, share of %d = %d", n, k, c, total, sh.Share(total))
					}
					sum += c
				}
				if !slices.Equal(got, want) || slices.Contains(seen, false) {
					t.Fatalf("N=%d: the shards' offsets are not the timeline's", n)
				}
				if sum != total {
					t.Errorf("N=%d: the shards count %d, the timeline %d", n, sum, total)
				}
				// Counts at every instant between offsets add up too.
				for _, end := range []int64{1, want[len(want)/3], want[len(want)/2] + 1, tc.end / 2, tc.end - 1} {
					single := Count(tc.make(t), end, math.MaxUint64)
					var parts uint64
					for k := 1; k <= n; k++ {
						sh, _ := NewShard(tc.make(t), k, n)
						parts += Count(sh, end, math.MaxUint64)
					}
					if parts != single {
						t.Errorf("N=%d end=%d: shards count %d, timeline %d", n, end, parts, single)
					}
				}
			}
		})
	}
}

// TestShardRequestBound: a bound of n requests is the whole timeline's;
// each shard sends its share, the shares add up to n, and every shard's
// timeline ends where the single timeline's does.
func TestShardRequestBound(t *testing.T) {
	for _, tc := range shardCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []uint64{1, 2, 5, 10, 11, 97} {
				for _, shards := range []int{1, 3, 4, 10} {
					single := tc.make(t)
					end := RequestEnd(single, n)
					var sum, sched uint64
					for k := 1; k <= shards; k++ {
						sh, _ := NewShard(tc.make(t), k, shards)
						limit := RequestLimit(sh, n)
						if e := RequestEnd(sh, n); e != end {
							t.Fatalf("n=%d N=%d K=%d: ends at %d, the timeline at %d", n, shards, k, e, end)
						}
						sum += limit
						// What the pacer schedules: the shard's requests
						// before the end, within its limit.
						sched += CountFrom(sh, 0, max(end, 1), limit)
						if limit > 0 {
							last, _ := sh.Global(limit - 1)
							if last >= n {
								t.Fatalf("n=%d N=%d K=%d: limit %d reaches global %d", n, shards, k, limit, last)
							}
						}
					}
					if sum != n {
						t.Errorf("n=%d N=%d: shares add up to %d", n, shards, sum)
					}
					if want := CountFrom(single, 0, max(end, 1), n); sched != want {
						t.Errorf("n=%d N=%d: shards schedule %d, the timeline %d", n, shards, sched, want)
					}
				}
			}
		})
	}
}

func TestShardArithmetic(t *testing.T) {
	tests := []struct {
		k, n       int
		c          uint64 // the first c global requests
		share      uint64
		j, global  uint64
		globalOK   bool
		countLimit uint64 // countBefore's limit, over a timeline of c requests
		count      uint64
	}{
		{1, 1, 10, 10, 9, 9, true, 4, 4},                                            // one shard is the timeline
		{1, 3, 0, 0, 0, 0, true, 5, 0},                                              // nothing before the first
		{1, 3, 1, 1, 1, 3, true, 5, 1},                                              // request 0 is shard 1's
		{2, 3, 1, 0, 1, 4, true, 5, 0},                                              // not shard 2's
		{3, 3, 3, 1, 2, 8, true, 5, 1},                                              // request 2 is shard 3's
		{3, 3, 10, 3, 0, 2, true, 2, 2},                                             // 2, 5, 8; limit 2
		{2, 4, 10, 3, 1, 5, true, 100, 3},                                           // 1, 5, 9
		{4, 4, 10, 2, 1, 7, true, 100, 2},                                           // 3, 7
		{1, 2, math.MaxUint64, 1 << 63, 1 << 63, 0, false, math.MaxUint64, 1 << 63}, // the top of uint64
	}
	for _, tc := range tests {
		sh, err := NewShard(Uniform{Rate: RatePerSecond(1e9)}, tc.k, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if got := sh.Share(tc.c); got != tc.share {
			t.Errorf("%d/%d Share(%d) = %d, want %d", tc.k, tc.n, tc.c, got, tc.share)
		}
		if g, ok := sh.Global(tc.j); g != tc.global || ok != tc.globalOK {
			t.Errorf("%d/%d Global(%d) = %d %v, want %d %v", tc.k, tc.n, tc.j, g, ok, tc.global, tc.globalOK)
		}
		// At 1e9/s request i is at offset i: c requests are before offset c.
		if tc.c < math.MaxInt64 {
			if got := sh.countBefore(int64(tc.c), tc.countLimit); got != tc.count {
				t.Errorf("%d/%d countBefore(%d, %d) = %d, want %d", tc.k, tc.n, tc.c, tc.countLimit, got, tc.count)
			}
		}
	}
	if sh, _ := NewShard(Uniform{Rate: RatePerSecond(1)}, 1, 2); sh.Offset(math.MaxUint64) != math.MaxInt64 {
		t.Error("an index beyond uint64 is not at the end of time")
	}
	for _, bad := range [][2]int{{0, 3}, {4, 3}, {1, 0}, {-1, 2}, {1, MaxShards + 1}} {
		if _, err := NewShard(Uniform{}, bad[0], bad[1]); err == nil {
			t.Errorf("NewShard(%d, %d) accepted", bad[0], bad[1])
		}
	}
}
