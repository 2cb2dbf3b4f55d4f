package stats

import (
	"math"
	"testing"
)

// Values from the standard tables (two-sided 95%: the 0.975 quantile).
func TestStudentQuantile(t *testing.T) {
	for _, c := range []struct {
		p, df, want float64
	}{
		{0.975, 1, 12.706205},
		{0.975, 2, 4.302653},
		{0.975, 4, 2.776445},
		{0.975, 9, 2.262157},
		{0.975, 30, 2.042272},
		{0.995, 5, 4.032143},
		{0.9, 10, 1.372184},
		{0.025, 9, -2.262157},
		{0.975, math.Inf(1), 1.959964},
		{0.5, 3, 0},
	} {
		if got := StudentQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("StudentQuantile(%g, %g) = %.6f, want %.6f", c.p, c.df, got, c.want)
		}
	}
}

func TestNormalQuantile(t *testing.T) {
	for _, c := range []struct{ p, want float64 }{
		{0.975, 1.959963985}, {0.5, 0}, {0.999, 3.090232306}, {1e-6, -4.753424309}, {0.0125, -2.241402728},
	} {
		if got := NormalQuantile(c.p); math.Abs(got-c.want) > 1e-8 {
			t.Errorf("NormalQuantile(%g) = %.9f, want %.9f", c.p, got, c.want)
		}
	}
	for _, p := range []float64{1e-9, 0.01, 0.3, 0.7, 0.99, 1 - 1e-9} {
		if got := NormalCDF(NormalQuantile(p)); math.Abs(got-p) > 1e-12*max(1, 1/p) {
			t.Errorf("NormalCDF(NormalQuantile(%g)) = %g", p, got)
		}
	}
}
