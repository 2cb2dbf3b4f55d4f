package timeline

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		perSec  float64
		wantErr bool
	}{
		{"2500", 2500, false},
		{"10k", 10000, false},
		{"10K", 10000, false},
		{"1.5M", 1.5e6, false},
		{"0.5", 0.5, false},
		{".25", 0.25, false},
		{"1.5k", 1500, false},
		{"0.001", 0.001, false},
		{"1000M", 1e9, false}, // the maximum
		{"1001M", 0, true},    // above it
		{"0", 0, true},        // zero is no rate
		{"0.0001", 0, true},   // finer than a thousandth
		{"-5", 0, true},       // negative
		{"1e3", 0, true},      // no exponents: ambiguous with suffixes
		{"10m", 0, true},      // lower-case m could mean milli
		{"abc", 0, true},
		{"", 0, true},
		{"5.", 0, true},
		{"k", 0, true},
	}
	for _, tc := range tests {
		r, err := ParseRate(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseRate(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && r.PerSecond() != tc.perSec {
			t.Errorf("ParseRate(%q) = %v/s, want %v/s", tc.in, r.PerSecond(), tc.perSec)
		}
	}
}

func TestUniformOffset(t *testing.T) {
	r := func(s string) Rate {
		v, err := ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		rate string
		i    uint64
		want int64
	}{
		{"10k", 0, 0},              // the first request goes at t0
		{"10k", 1, 100_000},        // 100 µs apart
		{"10k", 10_000, 1e9},       // one second of requests
		{"3", 1, 333_333_333},      // truncates, never rounds up
		{"3", 3, 1e9},              // and lands exactly on whole seconds
		{"3", 3_000_000_000, 1e18}, // index beyond 2^31, exact
		{"0.5", 1, 2e9},            // fractional rates: 2 s apart
		{"1.5M", 3, 2000},          // 666.67 ns apart
		{"1000M", 1 << 62, 4_611_686_018_427_387_904}, // big index at top rate, no overflow
		{"0.001", 1 << 40, math.MaxInt64},             // beyond int64 ns: saturates
	}
	for _, tc := range tests {
		if got := (Uniform{Rate: r(tc.rate)}).Offset(tc.i); got != tc.want {
			t.Errorf("Uniform{%s}.Offset(%d) = %d, want %d", tc.rate, tc.i, got, tc.want)
		}
	}
}

// exactOffset is floor(i / rate) in ns, computed with big integers from
// the rate's decimal text: independent of Uniform's 128-bit arithmetic.
func exactOffset(rate string, i uint64) *big.Int {
	r, ok := new(big.Rat).SetString(rate)
	if !ok {
		panic(rate)
	}
	q := new(big.Rat).Quo(new(big.Rat).SetInt64(1e9), r)
	q.Mul(q, new(big.Rat).SetInt(new(big.Int).SetUint64(i)))
	return new(big.Int).Quo(q.Num(), q.Denom()) // floor: both positive
}

// exactCount is the number of i ≥ 0 with floor(i/rate) < end: i/rate < end,
// i < end·rate, so ⌈end·rate⌉.
func exactCount(rate string, end int64) uint64 {
	r, _ := new(big.Rat).SetString(rate)
	x := new(big.Rat).Mul(r, big.NewRat(end, 1e9))
	n := new(big.Int).Quo(x.Num(), x.Denom())
	if new(big.Rat).SetInt(n).Cmp(x) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return n.Uint64()
}

// TestUniformMatchesExactArithmetic checks Offset and Count against big
// rational arithmetic over rates with awkward periods, indices near the
// int64 limit, and ends at and next to every boundary.
func TestUniformMatchesExactArithmetic(t *testing.T) {
	rates := []string{"3", "7", "0.001", "0.003", "999.999", "1500000", "1000000000", "12345.678", "999999999.999"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rs := range rates {
		rate, err := ParseRate(rs)
		if err != nil {
			t.Fatal(err)
		}
		u := Uniform{Rate: rate}
		for range 2000 {
			i := rng.Uint64N(1 << uint(rng.IntN(63)))
			want := exactOffset(rs, i)
			got := u.Offset(i)
			if !want.IsInt64() {
				if got != math.MaxInt64 {
					t.Fatalf("rate %s: Offset(%d) = %d, want saturation (exact %v)", rs, i, got, want)
				}
				continue
			}
			if got != want.Int64() {
				t.Fatalf("rate %s: Offset(%d) = %d, want %v", rs, i, got, want)
			}
			// Count at the boundary and on both sides of it.
			for _, end := range []int64{got - 1, got, got + 1} {
				if end <= 0 || end == math.MaxInt64 {
					continue
				}
				if c, w := Count(u, end, math.MaxUint64), exactCount(rs, end); c != w {
					t.Fatalf("rate %s: Count(end %d) = %d, want %d", rs, end, c, w)
				}
			}
		}
	}
}

// TestCountIsBoundedWhateverTheRate: counting the requests of a day at the
// maximum rate (8.64e13 of them) must not walk them.
func TestCountIsBoundedWhateverTheRate(t *testing.T) {
	top, _ := ParseRate("1000M")
	day := int64(24 * time.Hour)
	testrun.Finishes(t, "Count of a uniform day at 1000M/s", func() {
		if got, want := Count(Uniform{Rate: top}, day, math.MaxUint64), uint64(86400e9); got != want {
			t.Errorf("uniform: Count = %d, want %d", got, want)
		}
	})
	testrun.Finishes(t, "Count of a poisson day at 1000M/s", func() {
		p := NewPoisson(top, 1)
		got := Count(p, day, math.MaxUint64)
		// Poisson(8.64e13): within 6 standard deviations (9.3e6 each).
		if d := math.Abs(float64(got) - 86400e9); d > 6*math.Sqrt(86400e9) {
			t.Errorf("poisson: Count = %d, want about 8.64e13", got)
		}
		if p.seeds > 200 {
			t.Errorf("poisson: counting a day drew from %d streams, want a bound independent of the rate", p.seeds)
		}
	})
	testrun.Finishes(t, "Offset far ahead", func() {
		p := NewPoisson(top, 1)
		if o := p.Offset(5e13); o < 49_000e9 || o > 51_000e9 {
			t.Errorf("poisson: Offset(5e13) = %d, want about 5e4 s", o)
		}
		if o := NewPoisson(RatePerSecond(0.001), 1).Offset(1 << 40); o != math.MaxInt64 {
			t.Errorf("poisson: Offset beyond int64 ns = %d, want saturation", o)
		}
	})
}

// poissonOffsets walks the first n offsets of a Poisson timeline.
func poissonOffsets(rate Rate, seed uint64, n int) []int64 {
	p := NewPoisson(rate, seed)
	out := make([]int64, n)
	for i := range out {
		out[i] = p.Offset(uint64(i))
	}
	return out
}

func TestPoissonReproducible(t *testing.T) {
	for _, r := range []float64{0.01, 1000, 1e8} {
		rate := RatePerSecond(r)
		a := poissonOffsets(rate, 42, 100_000)
		b := poissonOffsets(rate, 42, 100_000)
		c := poissonOffsets(rate, 43, 100_000)
		if !slices.Equal(a, b) {
			t.Fatalf("rate %v: the same seed gave different offsets", r)
		}
		if slices.Equal(a, c) {
			t.Fatalf("rate %v: different seeds gave the same offsets", r)
		}
		if !slices.IsSorted(a) {
			t.Fatalf("rate %v: offsets decrease", r)
		}
		// Random access, backwards and forwards, gives the same answers.
		p := NewPoisson(rate, 42)
		rng := rand.New(rand.NewPCG(3, 4))
		for range 2000 {
			i := rng.IntN(len(a))
			if got := p.Offset(uint64(i)); got != a[i] {
				t.Fatalf("rate %v: random access Offset(%d) = %d, sequential %d", r, i, got, a[i])
			}
		}
	}
}

// TestPoissonIsAPoissonProcess checks the three properties that tell a
// homogeneous Poisson process: the mean rate, counts in windows whose
// variance equals their mean (dispersion index 1), and gaps whose standard
// deviation equals their mean (coefficient of variation 1). Rates cover
// inversion and PTRS for block counts, popcount and BTRS for splits, and
// windows that cross blocks.
func TestPoissonIsAPoissonProcess(t *testing.T) {
	t.Parallel()
	testrun.SkipRace(t, "one goroutine's arithmetic, which the detector only slows (9 s)")
	tests := []struct {
		rate   float64
		window time.Duration // 1000 windows
	}{
		{0.01, 5 * time.Hour},           // ~180 per window, 1000 blocks
		{1000, time.Second},             // ~1000 per window
		{1e8, 100 * time.Microsecond},   // ~10000 per window, deep splits
		{1e9, 10 * time.Microsecond},    // the maximum rate
		{123.456, 10 * time.Second},     // an awkward rate
		{5e5, 20 * time.Millisecond},    // ~10000 per window
		{0.3, 3 * time.Hour},            // ~3240 per window, crossing blocks
		{20, 700 * time.Millisecond},    // ~14 per window
		{1e6, 5 * time.Microsecond / 5}, // ~1 per window
	}
	for _, tc := range tests {
		rate := RatePerSecond(tc.rate)
		p := NewPoisson(rate, 7)
		const windows = 1000
		w := int64(tc.window)
		counts := make([]float64, windows)
		var gaps, gaps2 float64
		ngaps := 0
		prev := int64(-1)
		for i := uint64(0); ; i++ {
			o := p.Offset(i)
			if o >= windows*w {
				break
			}
			counts[o/w]++
			if prev >= 0 {
				g := float64(o - prev)
				gaps += g
				gaps2 += g * g
				ngaps++
			}
			prev = o
		}
		mean, m2 := 0.0, 0.0
		for _, c := range counts {
			mean += c
		}
		total := mean
		mean /= windows
		for _, c := range counts {
			m2 += (c - mean) * (c - mean)
		}
		dispersion := m2 / (windows - 1) / mean
		expect := tc.rate * float64(windows*w) / 1e9
		// The total is Poisson(expect): within 5 standard deviations.
		if d := math.Abs(total - expect); d > 5*math.Sqrt(expect) {
			t.Errorf("rate %v: %v arrivals, want %v ± %.0f", tc.rate, total, expect, 5*math.Sqrt(expect))
		}
		// The dispersion index of 1000 Poisson counts has a standard
		// deviation of about √(2/999) ≈ 0.045.
		if math.Abs(dispersion-1) > 0.25 {
			t.Errorf("rate %v: dispersion index %.3f, want 1", tc.rate, dispersion)
		}
		// Gaps of a few ns are distorted by whole-ns offsets: check the
		// rates whose mean gap is at least a microsecond.
		if gm := gaps / float64(ngaps); ngaps > 1000 && gm >= 1000 {
			cv := math.Sqrt(gaps2/float64(ngaps)-gm*gm) / gm
			if math.Abs(cv-1) > 0.05 {
				t.Errorf("rate %v: gap coefficient of variation %.3f, want 1", tc.rate, cv)
			}
		}
		t.Logf("rate %v: %v arrivals (expected %.0f), dispersion %.3f", tc.rate, total, expect, dispersion)
	}
}

// TestPoissonCountMatchesOffsets: Count(end) is exactly the number of
// offsets below end, at and around every arrival.
func TestPoissonCountMatchesOffsets(t *testing.T) {
	for _, r := range []float64{0.05, 3, 1000, 2e7, 1e9} {
		rate := RatePerSecond(r)
		offs := poissonOffsets(rate, 9, 30_000)
		p := NewPoisson(rate, 9)
		rng := rand.New(rand.NewPCG(5, 6))
		for range 3000 {
			j := rng.IntN(len(offs) - 1)
			for _, end := range []int64{offs[j] - 1, offs[j], offs[j] + 1} {
				if end <= 0 {
					continue
				}
				want, _ := slices.BinarySearch(offs, end) // offsets below end
				if got := Count(p, end, math.MaxUint64); got != uint64(want) {
					t.Fatalf("rate %v: Count(%d) = %d, want %d", r, end, got, want)
				}
			}
		}
		// Counting leaves the cursor where it was.
		if got := p.Offset(123); got != offs[123] {
			t.Fatalf("rate %v: Offset after Count = %d, want %d", r, got, offs[123])
		}
		if got := Count(p, math.MaxInt64, 500); got != 500 {
			t.Fatalf("rate %v: Count with a limit = %d", r, got)
		}
	}
}

func TestPoissonOffsetDoesNotAllocate(t *testing.T) {
	p := NewPoisson(RatePerSecond(1e6), 1)
	i := uint64(0)
	if n := testing.AllocsPerRun(100_000, func() { p.Offset(i); i++ }); n != 0 {
		t.Fatalf("Offset allocates %v times per call", n)
	}
}

func BenchmarkPoissonOffset(b *testing.B) {
	for _, r := range []float64{1000, 1e9} {
		b.Run(RatePerSecond(r).String(), func(b *testing.B) {
			p := NewPoisson(RatePerSecond(r), 1)
			for i := range b.N {
				p.Offset(uint64(i))
			}
		})
	}
}

func BenchmarkCountDay(b *testing.B) {
	top, _ := ParseRate("1000M")
	p := NewPoisson(top, 1)
	for range b.N {
		Count(p, int64(24*time.Hour), math.MaxUint64)
	}
}
