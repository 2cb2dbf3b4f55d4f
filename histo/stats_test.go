package histo

import (
	"math"
	"testing"
)

func TestInsufficient(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int64
		p    float64
		want bool
	}{
		{1000, 99, false},      // 10 samples beyond: just enough
		{999, 99, true},        // 9.99
		{1000, 99.9, true},     // 1
		{10000, 99.9, false},   // 10
		{99999, 99.99, true},   // 9.9999
		{100000, 99.99, false}, // 10
		{20, 50, false},        // 10
		{19, 50, true},
		{0, 50, true}, // no samples support nothing
	} {
		if got := Insufficient(c.n, c.p); got != c.want {
			t.Errorf("Insufficient(%d, %v) = %v, want %v", c.n, c.p, got, c.want)
		}
	}
}

// binomCDF is the binomial CDF by direct summation, for small n: an
// independent check of RankCI.
func binomCDF(n int64, q float64, x int64) float64 {
	if x < 0 {
		return 0
	}
	s := 0.0
	for i := int64(0); i <= min(x, n); i++ {
		c, _ := math.Lgamma(float64(n) + 1)
		a, _ := math.Lgamma(float64(i) + 1)
		b, _ := math.Lgamma(float64(n-i) + 1)
		s += math.Exp(c - a - b + float64(i)*math.Log(q) + float64(n-i)*math.Log1p(-q))
	}
	return s
}

func TestRankCI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n      int64
		q      float64
		lo, hi int64
	}{
		{100, 0.5, 40, 61},     // the textbook interval of the median of 100 (coverage 96.5%)
		{10, 0.5, 2, 9},        // X(2)..X(9): 97.9%
		{10, 0.99, 9, 11},      // no sample bounds the p99 of 10 from above
		{5, 0.5, 0, 6},         // nor the median of 5, on either side
		{1000, 0.99, 983, 997}, // p99 of 1000
		{0, 0.5, 0, 1},
	} {
		lo, hi := RankCI(c.n, c.q, 0.95)
		if lo != c.lo || hi != c.hi {
			t.Errorf("RankCI(%d, %v) = %d, %d; want %d, %d", c.n, c.q, lo, hi, c.lo, c.hi)
		}
	}
}

// TestRankCIIsTheTightestWithCoverage checks the defining property against
// direct summation: coverage at least 95%, and neither end can move inward
// under the rule (F(j−1) ≤ α/2 < F(j), F(k−2) < 1−α/2 ≤ F(k−1)).
func TestRankCIIsTheTightestWithCoverage(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{20, 57, 200, 1000, 3000} {
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
			lo, hi := RankCI(n, q, 0.95)
			F := func(x int64) float64 { return binomCDF(n, q, x) }
			cov := F(hi-1) - F(lo-1)
			if cov < 0.95-1e-9 {
				t.Errorf("n=%d q=%v: ranks %d..%d cover %.4f", n, q, lo, hi, cov)
			}
			if lo >= 1 && F(lo) <= 0.025 {
				t.Errorf("n=%d q=%v: lower rank %d could be %d", n, q, lo, lo+1)
			}
			if hi <= n && hi >= 2 && F(hi-2) >= 0.975 {
				t.Errorf("n=%d q=%v: upper rank %d could be %d", n, q, hi, hi-1)
			}
		}
	}
}

// TestRankCINormalApproximation: for a huge n the Normal approximation
// agrees with what the exact rule gives at the edge of the exact range.
func TestRankCINormalApproximation(t *testing.T) {
	t.Parallel()
	n := int64(1e12)
	lo, hi := RankCI(n, 0.5, 0.95)
	sd := math.Sqrt(float64(n) / 4)
	if d := float64(n)/2 - float64(lo); math.Abs(d/sd-1.96) > 0.01 {
		t.Errorf("lower rank %d is %.3f sd below the mean, want 1.96", lo, d/sd)
	}
	if d := float64(hi) - float64(n)/2; math.Abs(d/sd-1.96) > 0.01 {
		t.Errorf("upper rank %d is %.3f sd above the mean, want 1.96", hi, d/sd)
	}
}

func TestValueAtRankAndPercentileCI(t *testing.T) {
	t.Parallel()
	h := microseconds(t, 1000) // 1 µs .. 1 ms
	for _, c := range []struct {
		r    int64
		low  bool
		want int64 // 0: none; otherwise a value equivalent to the answer
	}{
		{1, true, 1000},
		{500, true, 500000},
		{500, false, 500000},
		{1000, false, 1000000},
		{0, false, 0},
		{1001, false, 0},
	} {
		got := valueAtRank(h, c.r, c.low)
		if c.want == 0 && got != 0 || c.want != 0 && !h.ValuesAreEquivalent(got, c.want) {
			t.Errorf("valueAtRank(%d, low=%v) = %d, want %d", c.r, c.low, got, c.want)
		}
	}
	// The low and high edges of the 500th value's bucket enclose it.
	if lo, hi := valueAtRank(h, 500, true), valueAtRank(h, 500, false); lo > 500000 || hi < 500000 {
		t.Errorf("the 500th value's bucket is [%d, %d]", lo, hi)
	}
	lo, hi, okLo, okHi := PercentileCI(h, 99)
	if !okLo || !okHi || !h.ValuesAreEquivalent(lo, 983000) || !h.ValuesAreEquivalent(hi, 997000) {
		t.Errorf("p99 CI [%d, %d] (%v %v), want the 983rd and 997th values", lo, hi, okLo, okHi)
	}
	if _, _, _, okHi := PercentileCI(h, 99.99); okHi {
		t.Error("p99.99 of 1000 samples has an upper bound within them")
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
