package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteTrendP is P(S' ≥ S) over every permutation of xs, counted one by
// one: the reference the q-multinomial must agree with.
func bruteTrendP(xs []float64) float64 {
	s0, _ := MannKendall(xs)
	perm := make([]float64, len(xs))
	copy(perm, xs)
	var total, tail int
	var rec func(k int)
	rec = func(k int) {
		if k == len(perm) {
			total++
			s := 0
			for i := range perm {
				for j := i + 1; j < len(perm); j++ {
					switch {
					case perm[j] > perm[i]:
						s++
					case perm[j] < perm[i]:
						s--
					}
				}
			}
			if s >= s0 {
				tail++
			}
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	return float64(tail) / float64(total)
}

// TestMannKendallExact: the one-sided p-values of S against the exact
// distribution, without ties from the Mahonian numbers (Kendall's table:
// n = 4, 5, 6 and 10), with ties against an enumeration of every order.
func TestMannKendallExact(t *testing.T) {
	for _, c := range []struct {
		name  string
		xs    []float64
		s     int
		p     float64
		exact bool // p is a fraction to compare exactly
	}{
		// n = 4: only a perfect rise, 1/24, and it cannot reach 1%.
		{"n=4 rising", []float64{1, 2, 3, 4}, 6, 1.0 / 24, true},
		// n = 5: S = 10 is 1/120 = 0.0083; S = 8 (one swap) 5/120 = 0.042.
		{"n=5 rising", []float64{1, 2, 3, 4, 5}, 10, 1.0 / 120, true},
		{"n=5 one swap", []float64{2, 1, 3, 4, 5}, 8, 5.0 / 120, true},
		{"n=5 flat order", []float64{3, 1, 5, 2, 4}, 2, 0, false},
		// n = 6: Mahonian 1, 5, 14, …: S = 15 is 1/720, 13 6/720, 11 20/720.
		{"n=6 rising", []float64{1, 2, 3, 4, 5, 6}, 15, 1.0 / 720, true},
		{"n=6 S=13", []float64{1, 2, 3, 4, 6, 5}, 13, 6.0 / 720, true},
		{"n=6 S=11", []float64{2, 1, 3, 4, 6, 5}, 11, 20.0 / 720, true},
		// n = 10: a perfect rise is 1/10!.
		{"n=10 rising", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 45, 1.0 / 3628800, true},
		// Falling: S = −10, and every order has S ≥ −10.
		{"n=5 falling", []float64{5, 4, 3, 2, 1}, -10, 1, true},
		// Ties: {0,0,1,1,1} in order: M = 6 unequal pairs, all in order;
		// 1 of the C(5,2) = 10 distinct orders: 0.1.
		{"n=5 ties rising", []float64{0, 0, 1, 1, 1}, 6, 0.1, true},
		{"all equal", []float64{2, 2, 2, 2, 2}, 0, 1, true},
		{"one value", []float64{7}, 0, 1, true},
	} {
		s, p := MannKendall(c.xs)
		if s != c.s {
			t.Errorf("%s: S %d, want %d", c.name, s, c.s)
		}
		want := c.p
		if !c.exact {
			want = bruteTrendP(c.xs)
		}
		if math.Abs(p-want) > 1e-12 {
			t.Errorf("%s: p %v, want %v", c.name, p, want)
		}
	}
	// Every small case, with and without ties, against the enumeration.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 2 + rng.IntN(7)
		xs := make([]float64, n)
		levels := 1 + rng.IntN(n+1)
		for i := range xs {
			xs[i] = float64(rng.IntN(levels))
		}
		if _, p := MannKendall(xs); math.Abs(p-bruteTrendP(xs)) > 1e-12 {
			t.Errorf("%v: p %v, enumeration %v", xs, p, bruteTrendP(xs))
		}
	}
}

// TestMannKendallNormal: above 10 values the Normal approximation with
// continuity correction, close to the exact distribution (which the
// q-multinomial still gives) where both apply.
func TestMannKendallNormal(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		s    int
		p    float64
	}{
		// n = 11 rising: S = 55, Var = 11·10·27/18 = 165, z = 54/√165.
		{"n=11 rising", seq(11), 55, 0.5 * math.Erfc(54/math.Sqrt(165)/math.Sqrt2)},
		// Interleaved: S = 6, Var = 12·11·29/18, z = 5/√Var.
		{"n=12 S=6", []float64{1, 12, 2, 11, 3, 10, 4, 9, 5, 8, 6, 7}, 6, 0.5 * math.Erfc(5/math.Sqrt(12*11*29/18.0)/math.Sqrt2)},
		// Falling: S = −66, z = −65/√Var.
		{"n=12 falling", []float64{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, -66, 0.5 * math.Erfc(-65/math.Sqrt(12*11*29/18.0)/math.Sqrt2)},
	} {
		s, p := MannKendall(c.xs)
		if s != c.s || math.Abs(p-c.p) > 1e-12 {
			t.Errorf("%s: S %d p %v, want %d %v", c.name, s, p, c.s, c.p)
		}
	}
	// The approximation against the exact tail for n = 11..16 without
	// ties: within 0.005 of it at the tail that matters (p near 1%).
	for n := 11; n <= 16; n++ {
		xs := seq(n)
		// Swap pairs until S is near the 1% point.
		for k := 0; k+1 < n; k += 2 {
			s, p := MannKendall(xs)
			exact := exactTrendP(n, tieGroups(xs), s)
			if math.Abs(p-exact) > 0.005 && exact < 0.05 {
				t.Errorf("n=%d S=%d: normal %v, exact %v", n, s, p, exact)
			}
			xs[k], xs[k+1] = xs[k+1], xs[k]
		}
	}
	// Ties shrink the variance: a rising series in pairs.
	xs := []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}
	s, p := MannKendall(xs)
	v := (12*11*29 - 6*(2*1*9)) / 18.0
	if want := 0.5 * math.Erfc(float64(s-1)/math.Sqrt(v)/math.Sqrt2); s != 60 || math.Abs(p-want) > 1e-12 {
		t.Errorf("tied pairs: S %d p %v, want 60 %v", s, p, want)
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
