package scheduler

import (
	"math"
	"testing"
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

func TestUniformNeverDrifts(t *testing.T) {
	// Accumulating a rounded period drifts; index arithmetic does not.
	u := Uniform{Rate: RatePerSecond(3)}
	var acc int64
	for i := uint64(0); i < 3_000_000; i++ {
		acc += 333_333_333 // what next += period would do
	}
	if got := u.Offset(3_000_000); got != 1_000_000*1e9 {
		t.Fatalf("Offset(3e6) = %d, want exactly 1e15", got)
	}
	if acc == 1_000_000*1e9 {
		t.Fatal("accumulation unexpectedly exact; the test no longer shows drift")
	}
}

func TestPoissonReproducibleAndMean(t *testing.T) {
	a := NewPoisson(RatePerSecond(1000), 42)
	b := NewPoisson(RatePerSecond(1000), 42)
	c := NewPoisson(RatePerSecond(1000), 43)
	var prev int64
	same := true
	for i := uint64(0); i < 100_000; i++ {
		oa, ob := a.Offset(i), b.Offset(i)
		if oa != ob {
			t.Fatalf("same seed differs at %d: %d vs %d", i, oa, ob)
		}
		if oa < prev {
			t.Fatalf("offsets decrease at %d", i)
		}
		prev = oa
		if c.Offset(i) != oa && i > 0 {
			same = false
		}
	}
	if same {
		t.Fatal("different seeds gave the same timeline")
	}
	// 100k arrivals at 1000/s take ~100 s; the mean of a sum of 1e5
	// exponentials is within ~1% with overwhelming probability.
	if got := float64(a.Offset(100_000)) / 1e9; math.Abs(got-100) > 1.5 {
		t.Fatalf("100k poisson arrivals at 1000/s span %.2f s, want ~100", got)
	}
	// Going back restarts the cursor and gives the same answer.
	if a.Offset(10) != b.Offset(10) {
		t.Fatal("random access differs from sequential access")
	}
	if a.Offset(0) != 0 {
		t.Fatal("first poisson arrival is not at offset 0")
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		name  string
		tl    Timeline
		end   int64
		limit uint64
		want  uint64
	}{
		{"10k for 1s", Uniform{RatePerSecond(10000)}, 1e9, math.MaxUint64, 10000},
		{"limit wins", Uniform{RatePerSecond(10000)}, 1e9, 500, 500},
		{"partial period counts the one at 0", Uniform{RatePerSecond(1)}, 1, math.MaxUint64, 1},
		{"3/s for 1s", Uniform{RatePerSecond(3)}, 1e9, math.MaxUint64, 3},
		{"empty window", Uniform{RatePerSecond(3)}, 0, math.MaxUint64, 0},
	}
	for _, tc := range tests {
		if got := Count(tc.tl, tc.end, tc.limit); got != tc.want {
			t.Errorf("%s: Count = %d, want %d", tc.name, got, tc.want)
		}
	}
}
