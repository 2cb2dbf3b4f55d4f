package timeline

import (
	"math"
	"math/rand/v2"
)

// Poisson sends as a homogeneous Poisson process of the given rate: the
// counts in disjoint windows are independent Poisson variates, the gaps
// exponential of mean 1/rate. The same seed and rate give the same offsets
// on every run.
//
// The process is built top-down so that any part of it can be reached
// without generating what comes before:
//
//	time ──► | block 0 (2^44 ns ≈ 4.9 h) | block 1 | ...
//	           N₀ ~ Poisson(rate·2^44 ns), drawn from block 0's own stream
//	           ├─ first half: Binomial(N₀, ½) ─┬─ ...   halves split again
//	           └─ second half: the rest        └─ ...   until ≤ leafMax arrivals
//	           a leaf's arrivals: its n uniform order statistics, generated in
//	           order from n+1 exponential spacings (two passes, O(1) memory)
//
// Every block, split and leaf draws from a PCG stream seeded by (seed,
// block, node), so nothing depends on the order of evaluation. Counting the
// requests before an offset costs one Poisson draw per whole block before
// it and one split per level of the block that holds it (about 40 at
// 1e9/s), and walks one leaf. Offset(i) for increasing i visits every node
// once: amortized O(1) per index, no allocation; going back re-descends.
//
// (A rate that varies by block, for stages, fits the same tree: a block's
// mean becomes the integral of the rate over it, a split's probability the
// left half's share of that integral, and a leaf's order statistics are
// mapped through the inverse of the integral.)
//
// Not safe for concurrent use.
type Poisson struct {
	rate Rate
	seed uint64
	mean float64 // expected arrivals per block

	// scratch draws block counts and splits (each from a freshly seeded
	// stream, so it keeps no state between calls); leaf walks the cursor's
	// leaf.
	scratch, leaf       rand.PCG
	scratchRng, leafRng *rand.Rand

	// The cursor: the path from the current block's root to the current
	// leaf, and the position within that leaf.
	block     uint64
	path      [poissonMaxDepth + 1]poissonNode
	depth     int
	leafReady bool
	leafK     uint64  // arrivals of the leaf generated so far
	leafSum   float64 // sum of the first leafK spacings
	leafTotal float64 // sum of all n+1 spacings
	cur       int64   // offset of the leafK-th arrival

	// seeds counts the streams seeded, for tests of the work done.
	seeds uint64
}

// poissonNode is a span of a block holding n arrivals, the first of them
// request number first.
type poissonNode struct {
	id            uint64 // heap numbering: the root is 1, children 2id, 2id+1
	n, first      uint64
	start, length float64 // in ns from the block's start
}

const (
	// poissonBlockShift makes a block 2^44 ns (about 4.9 hours) long:
	// long enough that counting to any int64 offset visits at most 2^19
	// blocks, short enough that a block's mean stays below 2^45 at the
	// maximum rate, where float64 still counts every arrival.
	poissonBlockShift = 44
	poissonBlockNs    = int64(1) << poissonBlockShift
	// poissonBlocks is how many blocks fit in int64 nanoseconds.
	poissonBlocks = uint64(math.MaxInt64>>poissonBlockShift) + 1
	// leafMax is the most arrivals a span holds before it is split.
	leafMax = 64
	// poissonMaxDepth bounds the splitting: a span of 2^(44-60) ns is a
	// leaf whatever it holds (at 1e9/s it holds about nothing).
	poissonMaxDepth = 60
)

// Streams of a block, told apart in the seed.
const (
	streamCount = iota
	streamSplit
	streamLeaf
)

// fork implements forker: the same process from the same seed.
func (p *Poisson) fork() Timeline { return NewPoisson(p.rate, p.seed) }

// NewPoisson returns a Poisson timeline.
func NewPoisson(rate Rate, seed uint64) *Poisson {
	p := &Poisson{rate: rate, seed: seed}
	p.scratchRng = rand.New(&p.scratch)
	p.leafRng = rand.New(&p.leaf)
	// arrivals per ns = milli/1e12; per block ×2^44.
	p.mean = float64(rate.milli) / 1e12 * float64(poissonBlockNs)
	p.load(0, 0)
	return p
}

// Name implements Timeline.
func (*Poisson) Name() string { return "poisson" }

// seedStream seeds src with the stream of one node of one block.
func (p *Poisson) seedStream(src *rand.PCG, block, id uint64, stream int) {
	p.seeds++
	src.Seed(mix64(p.seed^mix64(block+0x9e3779b97f4a7c15)), mix64(id<<2|uint64(stream)))
}

// mix64 is the SplitMix64 finaliser: a bijection that spreads nearby
// inputs over the whole range.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// blockCount is how many arrivals block b holds.
func (p *Poisson) blockCount(b uint64) uint64 {
	p.seedStream(&p.scratch, b, 0, streamCount)
	return samplePoisson(p.scratchRng, p.mean)
}

// split divides node s of block b between its two halves.
func (p *Poisson) split(b uint64, s poissonNode) (left, right poissonNode) {
	p.seedStream(&p.scratch, b, s.id, streamSplit)
	nl := sampleHalfBinomial(p.scratchRng, s.n)
	half := s.length / 2
	left = poissonNode{id: 2 * s.id, n: nl, first: s.first, start: s.start, length: half}
	right = poissonNode{id: 2*s.id + 1, n: s.n - nl, first: s.first + nl, start: s.start + half, length: half}
	return left, right
}

func isLeaf(s poissonNode, depth int) bool { return s.n <= leafMax || depth >= poissonMaxDepth }

// leafSpacings seeds src with leaf s's stream and returns the sum of its
// n+1 exponential spacings; reseed and draw again to walk the arrivals.
func (p *Poisson) leafSpacings(src *rand.PCG, r *rand.Rand, b uint64, s poissonNode) float64 {
	p.seedStream(src, b, s.id, streamLeaf)
	total := 0.0
	for range s.n + 1 {
		total += r.ExpFloat64()
	}
	p.seedStream(src, b, s.id, streamLeaf)
	return total
}

// leafTime places the arrival whose spacings sum to sum in leaf s, in ns
// from the block's start: always within [start, start+length), so counting
// by spans and by arrivals agree. The conversion stops a fused
// multiply-add, which would change the last bit on some machines.
func leafTime(s poissonNode, sum, total float64) float64 {
	end := s.start + s.length
	t := s.start + float64(s.length*(sum/total))
	if t >= end {
		t = math.Nextafter(end, s.start)
	}
	return t
}

// load makes block b, whose first request is first, the cursor's block.
// It reports false when the block starts beyond int64 nanoseconds.
func (p *Poisson) load(b, first uint64) bool {
	if b >= poissonBlocks {
		return false
	}
	n := uint64(0)
	if p.mean > 0 {
		n = p.blockCount(b)
	}
	p.block, p.depth, p.leafReady = b, 0, false
	p.path[0] = poissonNode{id: 1, n: n, first: first, length: float64(poissonBlockNs)}
	return true
}

// Offset implements Timeline.
func (p *Poisson) Offset(i uint64) int64 {
	if p.mean == 0 {
		return math.MaxInt64
	}
	// Climb to the deepest node of the path that holds i, or move to the
	// block that does.
	for {
		s := &p.path[p.depth]
		if i >= s.first && i-s.first < s.n {
			break
		}
		if p.depth > 0 {
			p.depth--
			p.leafReady = false
			continue
		}
		if i < s.first {
			p.load(0, 0)
			continue
		}
		if !p.load(p.block+1, s.first+s.n) {
			return math.MaxInt64 // beyond int64 nanoseconds
		}
	}
	for !isLeaf(p.path[p.depth], p.depth) {
		l, r := p.split(p.block, p.path[p.depth])
		p.depth++
		if i < r.first {
			p.path[p.depth] = l
		} else {
			p.path[p.depth] = r
		}
		p.leafReady = false
	}
	s := p.path[p.depth]
	k := i - s.first + 1 // generate arrivals up to the k-th of the leaf
	if !p.leafReady || p.leafK > k {
		p.leafTotal = p.leafSpacings(&p.leaf, p.leafRng, p.block, s)
		p.leafK, p.leafSum, p.leafReady = 0, 0, true
	}
	for p.leafK < k {
		p.leafSum += p.leafRng.ExpFloat64()
		p.leafK++
		p.cur = int64(p.block<<poissonBlockShift) + int64(leafTime(s, p.leafSum, p.leafTotal))
	}
	return p.cur
}

// countBefore implements counter: whole blocks by their counts, the block
// holding end by descending its splits, and one leaf by walking it. It
// leaves the cursor alone.
func (p *Poisson) countBefore(end int64, limit uint64) uint64 {
	if p.mean == 0 || end <= 0 {
		return 0
	}
	n := uint64(0)
	for b := uint64(0); b < poissonBlocks && n < limit; b++ {
		start := int64(b << poissonBlockShift)
		if start >= end {
			break
		}
		count := p.blockCount(b)
		if end-start >= poissonBlockNs {
			n += count
			continue
		}
		rel := end - start // below 2^44: exact as a float64
		relF := float64(rel)
		s := poissonNode{id: 1, n: count, length: float64(poissonBlockNs)}
		for depth := 0; s.n > 0; depth++ {
			if relF >= s.start+s.length {
				n += s.n
				break
			}
			if relF <= s.start {
				break
			}
			if isLeaf(s, depth) {
				n += p.countLeaf(b, s, rel)
				break
			}
			l, r := p.split(b, s)
			if relF >= r.start {
				n += l.n
				s = r
			} else {
				s = l
			}
		}
		break
	}
	return min(n, limit)
}

// countLeaf counts the arrivals of leaf s of block b below rel ns from
// the block's start, computing them exactly as Offset does.
func (p *Poisson) countLeaf(b uint64, s poissonNode, rel int64) uint64 {
	total := p.leafSpacings(&p.scratch, p.scratchRng, b, s)
	sum := 0.0
	k := uint64(0)
	for ; k < s.n; k++ {
		sum += p.scratchRng.ExpFloat64()
		if int64(leafTime(s, sum, total)) >= rel {
			break
		}
	}
	return k
}
