package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	rel := func(est, lo, hi float64) Change {
		return Change{Interval: Interval{Estimate: est, Lo: lo, Hi: hi}, Scale: Relative}
	}
	for _, c := range []struct {
		name string
		c    Change
		dir  Direction
		want Word
	}{
		{"inside the margin", rel(0.01, -0.03, 0.04), HigherIsWorse, Same},
		{"clearly higher latency", rel(0.2, 0.1, 0.3), HigherIsWorse, Worse},
		{"clearly lower latency", rel(-0.2, -0.3, -0.1), HigherIsWorse, Better},
		{"lower throughput is worse", rel(-0.2, -0.3, -0.1), LowerIsWorse, Worse},
		{"significant but under the margin", rel(0.03, 0.01, 0.06), HigherIsWorse, CannotTell},
		{"wide, holding zero", rel(0.1, -0.2, 0.4), HigherIsWorse, CannotTell},
		{"beyond the margin in the estimate only", rel(0.08, -0.01, 0.17), HigherIsWorse, CannotTell},
		{"unbounded", rel(0.1, 0.05, math.Inf(1)), HigherIsWorse, Worse},
		{"no interval", rel(0.1, math.NaN(), math.NaN()), HigherIsWorse, CannotTell},
		{"exactly the margin", rel(0, -0.05, 0.05), HigherIsWorse, Same},
	} {
		if got, why := c.c.Classify(0.05, c.dir); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, why, c.want)
		}
	}
}

func TestAgainst(t *testing.T) {
	t.Parallel()
	c := func(lo, hi float64) Change { return Change{Interval: Interval{Lo: lo, Hi: hi}, Scale: Relative} }
	for _, x := range []struct {
		c     Change
		allow float64
		dir   Direction
		want  Verdict
	}{
		{c(0.12, 0.3), 0.1, HigherIsWorse, Exceeded},
		{c(-0.05, 0.08), 0.1, HigherIsWorse, Within},
		{c(0.05, 0.15), 0.1, HigherIsWorse, Unsure},
		{c(-0.3, -0.12), 0.1, LowerIsWorse, Exceeded},
		{c(-0.04, 0.02), 0.05, LowerIsWorse, Within},
		{c(math.NaN(), math.NaN()), 0.1, HigherIsWorse, Unsure},
	} {
		if got := x.c.Against(x.allow, x.dir); got != x.want {
			t.Errorf("%+v against %g: %s, want %s", x.c.Interval, x.allow, got, x.want)
		}
	}
}

func TestBonferroni(t *testing.T) {
	t.Parallel()
	if got := Bonferroni(0.95, 1); got != 0.95 {
		t.Errorf("one look: %g", got)
	}
	if got := Bonferroni(0.95, 5); math.Abs(got-0.99) > 1e-12 {
		t.Errorf("five looks: %g, want 0.99", got)
	}
}

// The series reads percentiles as HdrHistogram does, merged intervals
// included.
func TestPercentilesMatchHdrHistogram(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	var hs []Hist
	all := hdrhistogram.New(1, 3_600_000_000_000, 3)
	for range 7 {
		h := hdrhistogram.New(1, 3_600_000_000_000, 3)
		for range 1 + rng.IntN(3000) {
			v := int64(math.Exp(11 + 1.5*rng.NormFloat64()))
			h.RecordValue(v)
			all.RecordValue(v)
		}
		hs = append(hs, HistOf(h))
	}
	s := NewSeries(hs)
	qs := []float64{0, 1, 50, 90, 99, 99.9, 99.99, 100}
	got := s.Percentiles(qs)
	for i, q := range qs {
		want := all.ValueAtQuantile(q)
		if q == 0 {
			want = all.ValueAtQuantile(1e-9) // the series reads the first bucket's top
		}
		if int64(got[i]) != want {
			t.Errorf("p%g: %d, HdrHistogram %d", q, int64(got[i]), want)
		}
	}
}

func TestTooFew(t *testing.T) {
	t.Parallel()
	if _, err := RunsInterval([]float64{1}, Relative, Level); err != ErrTooFew {
		t.Errorf("one run: %v", err)
	}
	if _, err := ChangeOverRuns([]float64{1}, []float64{2}, Relative, Level); err != ErrTooFew {
		t.Errorf("one run a side: %v", err)
	}
	if _, err := ChangeOverRuns([]float64{1, 0}, []float64{2, 3}, Relative, Level); err != ErrNotPositive {
		t.Errorf("a zero latency: %v", err)
	}
	if _, err := NewSeries(make([]Hist, 3)).PercentileIntervals([]float64{50}, Level, 1); err != ErrTooFew {
		t.Errorf("three intervals: %v", err)
	}
}
