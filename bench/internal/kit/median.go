package kit

import "sort"

// Median returns the median of f over xs (the mean of the middle two for
// an even count); 0 for none.
func Median[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// PairedMedian returns the median of the per-run ratios f(b[r])/f(a[r]),
// run r of b over run r of a (taken back to back), over the runs both
// have; 0 for none.
func PairedMedian[T any](a, b []T, f func(T) float64) float64 {
	var ratios []float64
	for r := range min(len(a), len(b)) {
		ratios = append(ratios, f(b[r])/f(a[r]))
	}
	return Median(ratios, func(v float64) float64 { return v })
}
