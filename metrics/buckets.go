package metrics

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The latency histograms are classic Prometheus histograms (cumulative
// `le` buckets), the kind every Prometheus and Grafana reads with
// histogram_quantile without a feature flag. Native (sparse) histograms
// would be finer, but Prometheus scrapes them only over protobuf and with
// a feature enabled (Debian's 2.42 needs --enable-feature=native-histograms),
// so a scrape without it would see no buckets at all.
//
// The default bounds are ten per decade (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6,
// 8 × 10^k) from 50 µs to 1 s, with 10 µs and 20 µs below and 2 s, 5 s and
// 10 s above (a stall's seconds need no finer bounds): every common
// latency SLO (1 ms, 2 ms, 5 ms, 250 ms, …) is a bound, so the share of
// requests within it is read exactly, and no bucket is more than a third
// wider than the one before, so histogram_quantile's linear interpolation
// inside a bucket stays within a few percent of HdrHistogram's percentile
// (bench/promquantile on pacer's own runs: p99 within 4%, p99.9 within 9%).

// MaxBuckets is the most bounds --metrics-buckets may give: each bound is
// a series per histogram and test in Prometheus.
const MaxBuckets = 200

// Bucket bounds must lie between MinBucket and MaxBucket (pacer's
// recorders hold 1 ns to an hour).
const (
	MinBucket = time.Microsecond
	MaxBucket = time.Hour
)

// perDecade are the default bounds' steps within a decade, in tenths.
var perDecade = []time.Duration{10, 12, 15, 20, 25, 30, 40, 50, 60, 80}

// DefaultBuckets returns the latency histograms' default upper bounds:
// 10 µs, 20 µs, then 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k from 50 µs
// to 1 s, then 2 s, 5 s and 10 s (49 bounds).
func DefaultBuckets() []time.Duration {
	out := []time.Duration{10 * time.Microsecond, 20 * time.Microsecond}
	for decade := time.Microsecond; decade <= 10*time.Millisecond; decade *= 10 {
		for _, m := range perDecade {
			if b := m * decade; b >= 50*time.Microsecond {
				out = append(out, b)
			}
		}
	}
	return append(out, time.Second, 2*time.Second, 5*time.Second, 10*time.Second)
}

// ParseBuckets reads --metrics-buckets: durations with their units
// separated by commas, such as 500us,1ms,2ms,5ms,1.5s. The bounds are
// sorted and duplicates dropped; each must be from MinBucket to MaxBucket,
// and there may be at most MaxBuckets of them.
func ParseBuckets(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("want durations such as 1ms,2ms,5ms")
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxBuckets {
		return nil, fmt.Errorf("%d bounds: at most %d (each is a series per histogram and test)", len(parts), MaxBuckets)
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		d, err := time.ParseDuration(p)
		if err != nil {
			return nil, fmt.Errorf("%q: want a duration with its unit, such as 2ms or 1.5s", clip(p, 32))
		}
		if d < MinBucket || d > MaxBucket {
			return nil, fmt.Errorf("%s: want a bound from %s to %s", p, MinBucket, MaxBucket)
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// clip shortens s to at most n bytes (for messages that quote input).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
