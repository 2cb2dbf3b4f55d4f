package timeline

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

func mustStages(t testing.TB, spec string) *Stages {
	t.Helper()
	list, err := ParseStages(spec)
	if err != nil {
		t.Fatalf("ParseStages(%q): %v", spec, err)
	}
	st, err := NewStages(list)
	if err != nil {
		t.Fatalf("NewStages(%q): %v", spec, err)
	}
	return st
}

func TestParseStages(t *testing.T) {
	tests := []struct {
		in      string
		want    string // FormatStages of the result
		wantErr string
	}{
		{"30s:1k,2m:10k,1m:10k,30s:0", "30s:1000,2m:10000,1m:10000,30s:0", ""},
		{" 0s:500 , 1m:500 ", "0s:500,1m:500", ""}, // a start rate, spaces
		{"1.5s:0.5", "1.5s:0.5", ""},
		{"1h30m:1.5M", "1h30m:1500000", ""},
		{"2h:1,90s:2,1m0.5s:3,250ms:4", "2h:1,1m30s:2,1m0.5s:3,250ms:4", ""},
		{"10s:0k", "10s:0", ""}, // zero is a rate here
		{"10s", "", "want DURATION:RATE"},
		{"ten:1k", "", "want a duration"},
		{"-1s:1k", "", "want a duration"},
		{"10s:fast", "", "want a number"},
		{"10s:-5", "", "want a number"},
		{"10s:1001M", "", "above the maximum"},
		{"", "", "want DURATION:RATE"},
		{"10s:1k,", "", "want DURATION:RATE"},
	}
	for _, tc := range tests {
		got, err := ParseStages(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseStages(%q) error %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseStages(%q): %v", tc.in, err)
			continue
		}
		if s := FormatStages(got); s != tc.want {
			t.Errorf("ParseStages(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
	if _, err := ParseStages(strings.Repeat("1s:1,", MaxStages) + "1s:1"); err == nil {
		t.Error("more than MaxStages stages accepted")
	}
}

func TestNewStagesRejects(t *testing.T) {
	for spec, want := range map[string]string{
		"0s:1k":                 "last no time",
		"10s:0":                 "schedule no requests",
		"10s:0,0s:1k":           "schedule no requests", // a step at the very end
		"700000h:1000M":         "more than 2^60",
		"2562047h:1,2562047h:1": "292 years",
	} {
		list, err := ParseStages(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if _, err := NewStages(list); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewStages(%s) error %v, want one containing %q", spec, err, want)
		}
	}
}

// isqrt2e15 is ⌊√(2·10^15·n)⌋: the instant in ns where a 0→10k/s ramp over
// 10 s, Λ(t) = 500·t² (t in s), reaches n: t = √(n/500) s = √(2·10^15·n) ns.
func isqrt2e15(n uint64) int64 {
	x := new(big.Int).Mul(big.NewInt(2e15), new(big.Int).SetUint64(n))
	return x.Sqrt(x).Int64()
}

// TestStagesRampIsExact: the acceptance table. A 0→10k/s ramp over 10 s
// schedules Λ(10 s) = 50,000 requests; request n goes at the instant the
// integral reaches n, to the nanosecond (the floor of the exact root).
func TestStagesRampIsExact(t *testing.T) {
	st := mustStages(t, "10s:10k")
	tests := []struct {
		n    uint64
		want int64
	}{
		{0, 0},                   // the first request at t0, where Λ = 0
		{1, 44_721_359},          // √(1/500) s = 44.721359... ms
		{2, 63_245_553},          // √(2/500) s
		{500, 1_000_000_000},     // Λ(1 s) = 500: exactly on the second
		{2000, 2_000_000_000},    // Λ(2 s) = 2000
		{12_500, 5_000_000_000},  // half way in time, a quarter of the requests
		{25_000, 7_071_067_811},  // half the requests at 10/√2 s
		{49_999, 9_999_899_999},  // the last request, 100 µs before the end
		{50_000, math.MaxInt64},  // Λ(10 s) = 50,000: no request n = 50,000
		{1 << 40, math.MaxInt64}, // far beyond
	}
	for _, tc := range tests {
		if got := st.Offset(tc.n); got != tc.want {
			t.Errorf("Offset(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	if got := Count(st, st.total, math.MaxUint64); got != 50_000 {
		t.Errorf("the ramp schedules %d requests, want 50000", got)
	}
	// Every one of the 50,000, against big-integer square roots.
	for n := range uint64(50_000) {
		if got, want := st.Offset(n), isqrt2e15(n); got != want {
			t.Fatalf("Offset(%d) = %d, want ⌊√(2e15·%d)⌋ = %d", n, got, n, want)
		}
	}
}

// TestConstantStageIsUniform: a stage at a constant rate from the start
// gives Uniform's offsets exactly, and its counts.
func TestConstantStageIsUniform(t *testing.T) {
	for _, rs := range []string{"10k", "3", "0.001", "999999999.999", "12345.678"} {
		rate, _ := ParseRate(rs)
		st := mustStages(t, "0s:"+rs+",1000h:"+rs)
		u := Uniform{Rate: rate}
		rng := rand.New(rand.NewPCG(3, 4))
		for k := range 3000 {
			i := uint64(k)
			if k >= 1000 {
				i = rng.Uint64N(Count(u, st.total, math.MaxUint64))
			}
			if got, want := st.Offset(i), u.Offset(i); got != want {
				t.Fatalf("rate %s: Offset(%d) = %d, Uniform's %d", rs, i, got, want)
			}
			end := u.Offset(i)
			for _, e := range []int64{end - 1, end, end + 1} {
				if got, want := Count(st, e, math.MaxUint64), Count(u, e, math.MaxUint64); e > 0 && got != want {
					t.Fatalf("rate %s: Count(%d) = %d, Uniform's %d", rs, e, got, want)
				}
			}
		}
	}
}

// refOffset is Offset computed independently from the stage list, with
// big integers and closed-form roots: within a stage of duration D from
// rate r0 to r1 (thousandths/s) the integral in units of 2e-12 requests
// is 2·r0·τ + Δ·τ²/D (Δ = r1 − r0), and the request whose remaining share
// is R goes at the floor of the root of Δ·τ² + 2·r0·D·τ − R·D = 0.
func refOffset(list []Stage, i uint64) *big.Int {
	target := new(big.Int).Mul(big.NewInt(2e12), new(big.Int).SetUint64(i))
	start := new(big.Int)
	prev := int64(0)
	for _, s := range list {
		r0, r1, d := prev, int64(s.Target.milli), int64(s.Duration)
		prev = r1
		if d == 0 {
			continue
		}
		D := big.NewInt(d)
		full := new(big.Int).Mul(big.NewInt(r0+r1), D)
		if target.Cmp(full) >= 0 {
			target.Sub(target, full)
			start.Add(start, D)
			continue
		}
		R := target
		r0D := new(big.Int).Mul(big.NewInt(r0), D)
		var tau *big.Int
		switch delta := r1 - r0; {
		case delta == 0: // 2·r0·τ ≤ R
			tau = new(big.Int).Quo(R, big.NewInt(2*r0))
		case delta > 0: // τ = (√(r0²D² + Δ·R·D) − r0·D)/Δ
			n := new(big.Int).Mul(r0D, r0D)
			n.Add(n, new(big.Int).Mul(big.NewInt(delta), new(big.Int).Mul(R, D)))
			s := new(big.Int).Sqrt(n)
			tau = s.Sub(s, r0D).Quo(s, big.NewInt(delta))
		default: // τ = (r0·D − √(r0²D² − |Δ|·R·D))/|Δ|, with the root rounded up
			n := new(big.Int).Mul(r0D, r0D)
			n.Sub(n, new(big.Int).Mul(big.NewInt(-delta), new(big.Int).Mul(R, D)))
			c := new(big.Int).Sqrt(n)
			if new(big.Int).Mul(c, c).Cmp(n) < 0 {
				c.Add(c, big.NewInt(1))
			}
			tau = new(big.Int).Sub(r0D, c)
			tau.Quo(tau, big.NewInt(-delta))
		}
		return tau.Add(tau, start)
	}
	return nil // beyond the stages
}

// randomStages draws a profile: ramps up and down, steps (0s stages),
// zero-rate stages, odd durations, rates from 0.001/s to 1000M/s.
func randomStages(rng *rand.Rand) []Stage {
	n := 1 + rng.IntN(6)
	list := make([]Stage, 0, n)
	for range n {
		var d time.Duration
		switch rng.IntN(5) {
		case 0:
			d = 0
		case 1:
			d = time.Duration(1 + rng.Int64N(1000)) // a few ns
		default:
			d = time.Duration(rng.Int64N(int64(time.Hour)))
		}
		var milli uint64
		switch rng.IntN(5) {
		case 0:
			milli = 0
		case 1:
			milli = 1 + rng.Uint64N(1000)
		case 2:
			milli = maxRateMilli - rng.Uint64N(1000)
		default:
			milli = rng.Uint64N(1e10)
		}
		list = append(list, Stage{Duration: d, Target: Rate{milli: milli}})
	}
	return list
}

// TestStagesMatchExactArithmetic: Offset against the independent
// big-integer roots, and Count against Offset, over random profiles, at
// random indices, at the stage boundaries and next to them.
func TestStagesMatchExactArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	profiles := 0
	for profiles < 300 {
		list := randomStages(rng)
		st, err := NewStages(list)
		if err != nil {
			continue // no requests, or too many
		}
		profiles++
		total := Count(st, st.total, math.MaxUint64)
		idx := []uint64{0, 1, total - 1, total, total + 1}
		for range 200 {
			idx = append(idx, rng.Uint64N(total+1))
		}
		// Requests next to each stage boundary.
		for _, g := range st.segs {
			c := Count(st, g.start, math.MaxUint64)
			idx = append(idx, c, c+1, max(c, 1)-1)
		}
		for _, i := range idx {
			got := st.Offset(i)
			want := refOffset(list, i)
			if want == nil {
				if got != math.MaxInt64 {
					t.Fatalf("%s: Offset(%d) = %d, want none (%d requests)", FormatStages(list), i, got, total)
				}
				continue
			}
			if !want.IsInt64() || got != want.Int64() {
				t.Fatalf("%s: Offset(%d) = %d, want %v", FormatStages(list), i, got, want)
			}
			// Count is the inverse: exactly i requests before Offset(i),
			// i+1 just after it (if Offset(i+1) is later).
			if c := Count(st, got, math.MaxUint64); c > i || (got > 0 && st.Offset(c) < got) || (c < i && st.Offset(c) != got) {
				t.Fatalf("%s: Count(%d) = %d around request %d", FormatStages(list), got, c, i)
			}
			if c := Count(st, got+1, math.MaxUint64); c < i+1 || (c < math.MaxUint64 && st.Offset(c) <= got) {
				t.Fatalf("%s: Count(%d) = %d after request %d", FormatStages(list), got+1, c, i)
			}
		}
	}
}

// TestZeroRateStagesSendNothing: no request is intended inside a stage at
// rate 0 (0→0), nor after a ramp down to 0; the request whose share the
// ramp down completed waits for the rate to rise again.
func TestZeroRateStagesSendNothing(t *testing.T) {
	st := mustStages(t, "1s:1k,1s:0,1s:0,1s:1k,1s:0,2s:0")
	// Λ: 500 by 1 s, 1000 by 2 s, flat to 3 s, 1500 by 4 s, 2000 by 5 s, flat.
	n := Count(st, st.total, math.MaxUint64)
	if n != 2000 {
		t.Fatalf("%d requests, want 2000", n)
	}
	if o := st.Offset(1000); o != 3e9 {
		t.Errorf("request 1000 (Λ = 1000 from 2 s to 3 s) at %d, want 3e9 where the rate rises", o)
	}
	for i := range n {
		o := st.Offset(i)
		if o >= 2e9 && o < 3e9 || o >= 5e9 {
			t.Fatalf("request %d at %d: inside a zero-rate stretch", i, o)
		}
	}
	if o := st.Offset(n); o != math.MaxInt64 {
		t.Errorf("Offset(%d) = %d after the last request, want none", n, o)
	}
	if r := st.RateAt(2_500_000_000); r != 0 {
		t.Errorf("RateAt(2.5 s) = %v, want 0", r)
	}
	if r := st.RateAt(3_500_000_000); r != 500 {
		t.Errorf("RateAt(3.5 s) = %v, want 500", r)
	}
	if m := st.Mean(0, st.total); math.Abs(m-2000.0/7) > 1e-9 {
		t.Errorf("Mean = %v, want 2000/7", m)
	}
}

func TestStagesOffsetDoesNotAllocate(t *testing.T) {
	st := mustStages(t, "30s:1k,2m:10k,1m:10k,30s:0")
	sp := NewStagedPoisson(st, 1)
	i := uint64(0)
	if a := testing.AllocsPerRun(1000, func() { st.Offset(i); sp.Offset(i); i += 7 }); a != 0 {
		t.Errorf("Offset allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { Count(st, 1e11, math.MaxUint64) }); a != 0 {
		t.Errorf("Count allocates %v times per call", a)
	}
}

// TestStagedPoissonConstantIsPoisson: at a constant rate the time change
// is the identity: the same offsets as a Poisson timeline of that rate and
// seed.
func TestStagedPoissonConstantIsPoisson(t *testing.T) {
	for _, rs := range []string{"10k", "3", "1000M"} {
		rate, _ := ParseRate(rs)
		sp := NewStagedPoisson(mustStages(t, "0s:"+rs+",1h:"+rs), 42)
		p := NewPoisson(rate, 42)
		for i := range uint64(20000) {
			want := p.Offset(i)
			if want >= int64(time.Hour) {
				want = math.MaxInt64
			}
			if got := sp.Offset(i); got != want {
				t.Fatalf("rate %s: Offset(%d) = %d, Poisson's %d", rs, i, got, want)
			}
		}
	}
}

// TestStagedPoissonFollowsTheRamp: over a 0→10k/s ramp and back, the
// counts in 50 ms windows are Poisson with mean Λ(b) − Λ(a): their
// standardised deviations have mean about 0 and variance about 1. Count
// agrees with the offsets everywhere, and no arrival falls where the rate
// is zero.
func TestStagedPoissonFollowsTheRamp(t *testing.T) {
	st := mustStages(t, "5s:10k,1s:0,1s:0,5s:10k,3s:0")
	for seed := range uint64(3) {
		sp := NewStagedPoisson(st, seed)
		const w = int64(50 * time.Millisecond)
		var offsets []int64
		for i := uint64(0); ; i++ {
			o := sp.Offset(i)
			if o == math.MaxInt64 {
				break
			}
			if o >= 6e9 && o < 7e9 || o >= st.total {
				t.Fatalf("seed %d: arrival %d at %d, where the rate is zero", seed, i, o)
			}
			if i > 0 && o < offsets[i-1] {
				t.Fatalf("seed %d: offsets go back at %d", seed, i)
			}
			offsets = append(offsets, o)
		}
		var sum, sumSq float64
		windows := 0
		k := 0
		for a := int64(0); a < st.total; a += w {
			b := a + w
			n := 0
			for k < len(offsets) && offsets[k] < b {
				k++
				n++
			}
			if c := Count(sp, b, math.MaxUint64); c != uint64(k) {
				t.Fatalf("seed %d: Count(%d) = %d, the offsets say %d", seed, b, c, k)
			}
			mean := (st.xFloat(b) - st.xFloat(a)) / xUnit
			if mean < 50 {
				continue // the normal approximation needs a mean of some size
			}
			z := (float64(n) - mean) / math.Sqrt(mean)
			sum += z
			sumSq += z * z
			windows++
		}
		mz := sum / float64(windows)
		vz := sumSq/float64(windows) - mz*mz
		// About 200 windows: the mean's standard error is 0.07, the
		// variance's about 0.1.
		if math.Abs(mz) > 0.3 || vz < 0.6 || vz > 1.5 {
			t.Errorf("seed %d: %d windows, standardised counts mean %.3f variance %.3f, want about 0 and 1", seed, windows, mz, vz)
		}
		if got, want := float64(len(offsets)), st.x.float()/xUnit; math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("seed %d: %v arrivals, want about %v", seed, got, want)
		}
	}
}

// TestStagedPoissonReproducible: the same seed gives the same offsets,
// whatever the order they are asked in.
func TestStagedPoissonReproducible(t *testing.T) {
	st := mustStages(t, "30s:1k,2m:10k,1m:10k,30s:0")
	a, b := NewStagedPoisson(st, 9), NewStagedPoisson(st, 9)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		i := rng.Uint64N(2_000_000)
		if x, y := a.Offset(i), b.Offset(i); x != y {
			t.Fatalf("Offset(%d): %d and %d", i, x, y)
		}
		b.Offset(rng.Uint64N(2_000_000)) // move b's cursor elsewhere
	}
	if NewStagedPoisson(st, 10).Offset(1000) == a.Offset(1000) {
		t.Error("seeds 9 and 10 give the same offset")
	}
}

// TestStagesCountIsBounded: counting a long profile at the top rate does
// not walk its requests.
func TestStagesCountIsBounded(t *testing.T) {
	st := mustStages(t, "1h:1000M,100h:1000M,1h:0")
	testrun.Finishes(t, "Count of 102 h of stages at 1000M/s", func() {
		// Λ = 1e9·(1800 + 360000 + 1800) s.
		if got, want := Count(st, st.total, math.MaxUint64), uint64(363600e9); got != want {
			t.Errorf("Count = %d, want %d", got, want)
		}
		sp := NewStagedPoisson(st, 1)
		got := Count(sp, st.total, math.MaxUint64)
		if d := math.Abs(float64(got) - 363600e9); d > 6*math.Sqrt(363600e9) {
			t.Errorf("poisson: Count = %d, want about 3.636e14", got)
		}
		if o := sp.Offset(363000e9); o < 3.6e14 || o > 3.7e14 {
			t.Errorf("poisson: Offset(3.63e14) = %d", o)
		}
	})
}

func BenchmarkStagesOffset(b *testing.B) {
	st := mustStages(b, "30s:1k,2m:10k,1m:10k,30s:0")
	for i := 0; b.Loop(); i++ {
		st.Offset(uint64(i % 1_500_000))
	}
}

func BenchmarkStagedPoissonOffset(b *testing.B) {
	sp := NewStagedPoisson(mustStages(b, "30s:1k,2m:10k,1m:10k,30s:0"), 1)
	for i := 0; b.Loop(); i++ {
		sp.Offset(uint64(i % 1_500_000))
	}
}
