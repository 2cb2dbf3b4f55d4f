package timeline

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"time"
)

// Stage is one piece of a piecewise-linear rate (--stages, k6's
// ramping-arrival-rate): over Duration the rate goes linearly from the
// previous stage's Target (zero before the first stage) to its own. A
// stage of zero duration steps the rate at once, so "0s:5k,1m:5k" is a
// minute at a constant 5k/s (k6's startRate). Target may be zero.
type Stage struct {
	Duration time.Duration
	Target   Rate
}

// MaxStages bounds how many stages a profile holds.
const MaxStages = 1000

// maxStageRequests bounds the requests a profile schedules (about 10^18),
// so every quantity of the exact arithmetic below keeps its headroom.
const maxStageRequests = 1 << 60

// ParseStages reads stages written as DURATION:RATE pairs separated by
// commas, e.g. "30s:1k,2m:10k,1m:10k,30s:0": durations as Go writes them
// (500ms, 30s, 2m, 1h30m; 0s steps the rate), rates as ParseRate reads
// them, or 0.
func ParseStages(s string) ([]Stage, error) {
	parts := strings.Split(s, ",")
	if len(parts) > MaxStages {
		return nil, fmt.Errorf("%d stages: at most %d", len(parts), MaxStages)
	}
	out := make([]Stage, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		ds, rs, ok := strings.Cut(p, ":")
		if !ok {
			return nil, fmt.Errorf("stage %q: want DURATION:RATE such as 30s:1k", p)
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("stage %q: want a duration such as 500ms, 30s or 2m before the colon", p)
		}
		r, err := parseRate(rs)
		if err != nil {
			return nil, fmt.Errorf("stage %q: %v", p, err)
		}
		out = append(out, Stage{Duration: d, Target: r})
	}
	return out, nil
}

// FormatStages writes stages the way ParseStages reads them.
func FormatStages(st []Stage) string {
	var b strings.Builder
	for i, s := range st {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(shortDuration(s.Duration))
		b.WriteByte(':')
		b.WriteString(s.Target.String())
	}
	return b.String()
}

// shortDuration writes d as Duration.String does, without its zero
// minutes and seconds: 2m, 1h30m, 1h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") || strings.HasSuffix(s, "h0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Stages is a piecewise-linear rate and the timeline that follows it: the
// integral of the rate, Λ(t), counts the requests intended before t, and
// request i (from 0) is sent at the instant the integral reaches i — the
// last instant t with Λ(t) ≤ i, so a request never falls where the rate is
// zero — truncated to the nanosecond:
//
//	Offset(i) = max{ t integer ns : Λ(t) ≤ i }
//
//	rate ▲      ╱‾‾‾‾‾‾╲            Λ(t) = area under the rate up to t
//	     │    ╱         ╲           request i at Λ⁻¹(i)
//	     │  ╱            ╲
//	     └─┴──┴──┴──┴──┴──┴──► t    a ramp from 0: offsets ∝ √i
//
// A constant-rate stage starting at 0 gives exactly Uniform's offsets, and
// the run schedules ⌈Λ(end)⌉ requests. Offsets come from the index alone,
// in exact integer arithmetic: the quadratic of a ramp is solved in
// float64 and the result corrected by exact 192-bit comparisons, so every
// offset is the true floor, whatever the rates and lengths. Offset and
// Count cost O(log stages).
//
// Stages is immutable: safe for concurrent use.
type Stages struct {
	list  []Stage
	segs  []segment // the stages of non-zero duration, in order
	total int64     // ns
	x     u128      // X over the whole profile
}

// segment is a stage of non-zero duration. X, the integral in units of
// 2·10^-12 requests so that it is an integer at every stage boundary,
// grows within the segment as
//
//	X(τ) = 2·r0·τ + (r1−r0)·τ²/dur      (rates in thousandths/s, τ in ns)
//
// and reaches x = (r0+r1)·dur at its end.
type segment struct {
	start, dur int64
	r0, r1     uint64 // rate at the start and at the end, thousandths/s
	before     u128   // X before the segment
	x          u128   // X of the whole segment
}

// xUnit is X per request: X = 2·10^12·Λ.
const xUnit = 2e12

var (
	_ Timeline = (*Stages)(nil)
	_ counter  = (*Stages)(nil)
)

// NewStages compiles stages into a timeline. The stages must last a
// positive time that fits in int64 nanoseconds and schedule at least one
// request and at most 2^60.
func NewStages(list []Stage) (*Stages, error) {
	if len(list) == 0 {
		return nil, errors.New("no stages")
	}
	if len(list) > MaxStages {
		return nil, fmt.Errorf("%d stages: at most %d", len(list), MaxStages)
	}
	s := &Stages{list: append([]Stage(nil), list...)}
	prev := uint64(0)
	for _, st := range list {
		if st.Duration < 0 {
			return nil, fmt.Errorf("stage of %s: negative duration", st.Duration)
		}
		if st.Target.milli > maxRateMilli {
			return nil, fmt.Errorf("stage rate %s is above the maximum of 1000M requests per second", st.Target)
		}
		if st.Duration > 0 {
			if s.total > math.MaxInt64-int64(st.Duration) {
				return nil, errors.New("the stages last longer than 292 years")
			}
			g := segment{start: s.total, dur: int64(st.Duration), r0: prev, r1: st.Target.milli, before: s.x}
			g.x = mul64(g.r0+g.r1, uint64(g.dur))
			s.x = s.x.add(g.x)
			s.total += g.dur
			s.segs = append(s.segs, g)
		}
		prev = st.Target.milli
	}
	if s.total == 0 {
		return nil, errors.New("the stages last no time")
	}
	if s.x.isZero() {
		return nil, errors.New("the stages schedule no requests: every rate is 0")
	}
	if !s.x.less(mul64(xUnit, maxStageRequests)) {
		return nil, errors.New("the stages schedule more than 2^60 requests")
	}
	return s, nil
}

// List returns the stages as given.
func (s *Stages) List() []Stage { return append([]Stage(nil), s.list...) }

// Duration is the length of the timeline: the sum of the stages.
func (s *Stages) Duration() time.Duration { return time.Duration(s.total) }

// Name implements Timeline: the arrivals are evenly spaced in Λ.
func (*Stages) Name() string { return "uniform" }

// Mean returns the average rate over [from, to) offsets, in requests
// per second: the expected number of requests there over the time.
func (s *Stages) Mean(from, to int64) float64 {
	from, to = max(from, 0), min(to, s.total)
	if to <= from {
		return 0
	}
	return (s.xFloat(to) - s.xFloat(from)) / xUnit / (float64(to-from) / 1e9)
}

// RateAt returns the rate at offset off, in requests per second (zero
// outside the stages).
func (s *Stages) RateAt(off int64) float64 {
	if off < 0 || off >= s.total {
		return 0
	}
	g := &s.segs[s.segAt(off)]
	tau := float64(off - g.start)
	return (float64(g.r0) + (float64(g.r1)-float64(g.r0))*tau/float64(g.dur)) / 1000
}

// Offset implements Timeline.
func (s *Stages) Offset(i uint64) int64 { return s.inverse(mul64(xUnit, i)) }

// countBefore implements counter: the requests with Offset(i) < end are
// those with i < Λ(end), ⌈Λ(end)⌉ of them.
func (s *Stages) countBefore(end int64, limit uint64) uint64 {
	if end <= 0 || limit == 0 {
		return 0
	}
	return min(s.covering(end, xUnit), limit)
}

// segAt returns the index of the segment holding offset off (0 ≤ off <
// total).
func (s *Stages) segAt(off int64) int {
	return sort.Search(len(s.segs), func(k int) bool { return s.segs[k].start+s.segs[k].dur > off }) // the first that ends after off
}

// inverse returns the last integer offset t with X(t) ≤ target, or
// math.MaxInt64 when X never exceeds target within the stages. For
// integer t, t ≤ Λ⁻¹ ⟺ X(t) ≤ target, so this is the floor of the exact
// inverse.
func (s *Stages) inverse(target u128) int64 {
	k := sort.Search(len(s.segs), func(k int) bool { return target.less(s.segs[k].before.add(s.segs[k].x)) })
	if k == len(s.segs) {
		return math.MaxInt64
	}
	g := &s.segs[k]
	r := target.sub(g.before) // before ≤ target < before + x
	// X(0) = 0 ≤ r and X(dur) = x > r: the answer is in [0, dur).
	tau := lastTrue(0, g.dur, g.estimate(r), func(t int64) bool { return g.atMost(t, r) })
	return g.start + tau
}

// covering returns the smallest m ≥ 0 with X(end) ≤ unit·m, for end > 0:
// ⌈X(end)/unit⌉. unit·(2^63−1) must reach X over the whole profile.
func (s *Stages) covering(end int64, unit uint64) uint64 {
	reaches := func(m int64) bool { // X(end) ≤ unit·m
		t := mul64(unit, uint64(m))
		if end >= s.total {
			return !t.less(s.x)
		}
		g := &s.segs[s.segAt(end)]
		if t.less(g.before) {
			return false
		}
		r := t.sub(g.before)
		return !r.less(g.x) || g.atMost(end-g.start, r)
	}
	if reaches(0) {
		return 0
	}
	guess := int64(math.Min(math.Ceil(s.xFloat(end)/float64(unit)), math.MaxInt64/2))
	return uint64(lastTrue(0, math.MaxInt64, guess-1, func(m int64) bool { return !reaches(m) })) + 1
}

// xFloat is X at offset off, approximately.
func (s *Stages) xFloat(off int64) float64 {
	if off <= 0 {
		return 0
	}
	if off >= s.total {
		return s.x.float()
	}
	g := &s.segs[s.segAt(off)]
	tau := float64(off - g.start)
	return g.before.float() + 2*float64(g.r0)*tau + (float64(g.r1)-float64(g.r0))*tau*tau/float64(g.dur)
}

// atMost reports whether X(τ) ≤ r within the segment, exactly:
//
//	2·r0·τ + (r1−r0)·τ²/dur ≤ r  ⟺  2·r0·τ·dur + (r1−r0)·τ² ≤ r·dur
//
// With rates below 2^40, τ ≤ dur < 2^63 and r < x < 2^104, every product
// stays below 2^168.
func (g *segment) atMost(tau int64, r u128) bool {
	t, d := uint64(tau), uint64(g.dur)
	lhs := mul128x64(mul64(g.r0, t), 2*d)
	rhs := mul128x64(r, d)
	sq := mul64(t, t)
	if g.r1 >= g.r0 {
		lhs = lhs.add(mul128x64(sq, g.r1-g.r0))
	} else {
		rhs = rhs.add(mul128x64(sq, g.r0-g.r1))
	}
	return lhs.cmp(rhs) <= 0
}

// estimate solves X(τ) = r in float64, in the forms that do not cancel: a
// ramp up from the start, a ramp down from the end (where the rate, and
// so the equation, is steep near zero).
func (g *segment) estimate(r u128) int64 {
	rf := r.float()
	r0, r1, d := float64(g.r0), float64(g.r1), float64(g.dur)
	var tau float64
	switch {
	case g.r1 == g.r0:
		tau = rf / (2 * r0)
	case g.r1 > g.r0:
		tau = rf / (r0 + math.Sqrt(r0*r0+(r1-r0)/d*rf))
	default:
		w := g.x.sub(r).float() // X still to come in the segment
		tau = d - w/(r1+math.Sqrt(r1*r1+(r0-r1)/d*w))
	}
	switch {
	case !(tau > 0): // also NaN (0/0 at the start of a ramp from 0)
		return 0
	case tau >= d:
		return g.dur - 1
	}
	return int64(tau)
}

// lastTrue returns the largest x in [lo, hi) for which ok holds, ok being
// monotone (true, then false), ok(lo) true and ok(hi) false (neither is
// evaluated). It starts at guess and gallops outwards, so a close guess
// costs two or three evaluations and a wrong one O(log error).
func lastTrue(lo, hi, guess int64, ok func(int64) bool) int64 {
	if hi-lo <= 1 {
		return lo
	}
	guess = min(max(guess, lo+1), hi-1)
	if ok(guess) {
		lo = guess
		for step := int64(1); hi-lo > step; step *= 2 {
			n := lo + step
			if !ok(n) {
				hi = n
				break
			}
			lo = n
		}
	} else {
		hi = guess
		for step := int64(1); hi-lo > step; step *= 2 {
			n := hi - step
			if ok(n) {
				lo = n
				break
			}
			hi = n
		}
	}
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if ok(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// StagedPoisson is a non-homogeneous Poisson process whose rate follows
// stages, built by time change: a homogeneous Poisson process is read as
// positions on the integral's axis Λ, and each arrival is mapped to the
// instant where the integral reaches it, by the exact inverse that Stages
// uses. Its counts in a window are Poisson with mean Λ(end) − Λ(start),
// independent across windows. The unit process runs at the stages' mean
// rate, so it spans about the same time as the stages and stays as cheap
// to count as a Poisson timeline; its arrivals are whole nanoseconds, a
// resolution of (mean rate / rate here) ns after the mapping.
//
// The same seed and stages give the same offsets. Not safe for concurrent
// use (the Poisson process keeps a cursor).
type StagedPoisson struct {
	st   *Stages
	unit *Poisson
	// scale is X per nanosecond of the unit process: 2·rho, rho its rate
	// in thousandths per second (Λ = o·rho/10^12 for its offset o in ns).
	scale uint64
}

var (
	_ Timeline = (*StagedPoisson)(nil)
	_ counter  = (*StagedPoisson)(nil)
)

// fork implements forker: the same process from the same seed.
func (sp *StagedPoisson) fork() Timeline {
	return &StagedPoisson{st: sp.st, unit: sp.unit.fork().(*Poisson), scale: sp.scale}
}

// NewStagedPoisson returns a Poisson process following st.
func NewStagedPoisson(st *Stages, seed uint64) *StagedPoisson {
	// The mean rate in thousandths, rounded up: ⌈X/(2·total)⌉, at least
	// 1/s. Then X/scale ≤ total < 2^63: the unit offsets that matter fit
	// in int64. (At a constant rate the unit process is that rate's, and
	// the time change the identity.)
	rho := uint64(1000)
	if q, rem := st.x.div64(2 * uint64(st.total)); q >= rho {
		rho = q
		if rem != 0 {
			rho++
		}
	}
	return &StagedPoisson{st: st, unit: NewPoisson(Rate{milli: rho}, seed), scale: 2 * rho}
}

// Name implements Timeline.
func (*StagedPoisson) Name() string { return "poisson" }

// Offset implements Timeline.
func (p *StagedPoisson) Offset(i uint64) int64 {
	o := p.unit.Offset(i)
	if o == math.MaxInt64 || o < 0 {
		return math.MaxInt64
	}
	return p.st.inverse(mul64(p.scale, uint64(o)))
}

// countBefore implements counter: arrival i is before end exactly when
// its unit offset o satisfies scale·o < X(end), that is o < m for the
// smallest m with X(end) ≤ scale·m.
func (p *StagedPoisson) countBefore(end int64, limit uint64) uint64 {
	if end <= 0 || limit == 0 {
		return 0
	}
	m := p.st.covering(end, p.scale)
	if m > math.MaxInt64 {
		m = math.MaxInt64
	}
	return p.unit.countBefore(int64(m), limit)
}

// StagesOf returns the stages a timeline follows, nil for a constant rate.
func StagesOf(tl Timeline) *Stages {
	switch t := tl.(type) {
	case *Stages:
		return t
	case *StagedPoisson:
		return t.st
	case Shard:
		return StagesOf(t.tl)
	}
	return nil
}

// u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

func mul64(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// sub returns a − b for a ≥ b.
func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func (a u128) isZero() bool { return a.hi == 0 && a.lo == 0 }

func (a u128) float() float64 { return float64(a.hi)*0x1p64 + float64(a.lo) }

// div64 returns a/d and its remainder, for a/d below 2^64.
func (a u128) div64(d uint64) (q, r uint64) { return bits.Div64(a.hi, a.lo, d) }

// u192 is an unsigned 192-bit integer, least significant word first.
type u192 [3]uint64

func mul128x64(a u128, b uint64) u192 {
	h1, l1 := bits.Mul64(a.lo, b)
	h2, l2 := bits.Mul64(a.hi, b)
	w1, c := bits.Add64(h1, l2, 0)
	return u192{l1, w1, h2 + c}
}

func (a u192) add(b u192) u192 {
	w0, c := bits.Add64(a[0], b[0], 0)
	w1, c := bits.Add64(a[1], b[1], c)
	w2, _ := bits.Add64(a[2], b[2], c)
	return u192{w0, w1, w2}
}

func (a u192) cmp(b u192) int {
	for i := 2; i >= 0; i-- {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}
