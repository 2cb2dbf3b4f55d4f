package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sizes is the distribution of value sizes for __data__: fixed (-d 32),
// uniform over a range (-d 32-1024) or a weighted list (-d 64:8,4096:2).
type Sizes struct {
	min, max int
	// weighted sizes, cumulative weights; empty for fixed and ranges.
	sizes []int
	cum   []uint64
	total uint64
}

// FixedSize is a single value size.
func FixedSize(n int) Sizes { return Sizes{min: n, max: n} }

// MaxValueSize bounds value sizes (-d, __data__): Redis's default
// proto-max-bulk-len, the largest bulk string a server accepts.
const MaxValueSize = 512 << 20

// ParseSizes reads -d: "32", "32-1024" or "64:8,4096:2", each size from 1
// byte to MaxValueSize.
func ParseSizes(s string) (Sizes, error) {
	bad := fmt.Errorf("-d %q: want a size (32), a range (32-1024) or a weighted list (64:8,4096:2), from 1 byte to 512 MiB", s)
	var tooBig error
	size := func(v string) (int, bool) {
		v = strings.TrimSpace(v)
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil && n > MaxValueSize || errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-") {
			tooBig = fmt.Errorf("-d %q: %s bytes is above the largest value, 512 MiB (%d bytes, what a Redis server accepts)", s, v, MaxValueSize)
			return 0, false
		}
		return int(n), err == nil && n >= 1
	}
	z, err := parseSizes(s, size)
	if err != nil {
		if tooBig != nil {
			return Sizes{}, tooBig
		}
		return Sizes{}, bad
	}
	return z, nil
}

func parseSizes(s string, size func(string) (int, bool)) (Sizes, error) {
	bad := errors.New("bad")
	switch {
	case strings.Contains(s, ":"):
		var z Sizes
		for _, item := range strings.Split(s, ",") {
			sz, w, ok := strings.Cut(item, ":")
			n, ok1 := size(sz)
			weight, err := strconv.ParseUint(strings.TrimSpace(w), 10, 32)
			if !ok || !ok1 || err != nil || weight == 0 {
				return Sizes{}, bad
			}
			z.total += weight
			z.sizes = append(z.sizes, n)
			z.cum = append(z.cum, z.total)
			if len(z.sizes) == 1 || n < z.min {
				z.min = n
			}
			z.max = max(z.max, n)
		}
		return z, nil
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		a, ok1 := size(lo)
		b, ok2 := size(hi)
		if !ok1 || !ok2 || b < a {
			return Sizes{}, bad
		}
		return Sizes{min: a, max: b}, nil
	}
	n, ok := size(s)
	if !ok {
		return Sizes{}, bad
	}
	return FixedSize(n), nil
}

// Fixed reports whether every value has the same size, and which.
func (z Sizes) Fixed() (int, bool) { return z.min, z.min == z.max && len(z.sizes) <= 1 }

// Max is the largest size drawn.
func (z Sizes) Max() int { return z.max }

// Mean is the expected size.
func (z Sizes) Mean() float64 {
	if len(z.sizes) > 0 {
		var s float64
		prev := uint64(0)
		for i, n := range z.sizes {
			s += float64(n) * float64(z.cum[i]-prev)
			prev = z.cum[i]
		}
		return s / float64(z.total)
	}
	return float64(z.min+z.max) / 2
}

// Draw returns one size.
func (z Sizes) Draw(r *Rand) int {
	switch {
	case len(z.sizes) > 0:
		w := r.Below(z.total)
		for i, c := range z.cum {
			if w < c {
				return z.sizes[i]
			}
		}
		return z.sizes[len(z.sizes)-1]
	case z.max > z.min:
		return z.min + int(r.Below(uint64(z.max-z.min+1)))
	}
	return z.min
}

// String prints the sizes as ParseSizes reads them.
func (z Sizes) String() string {
	if len(z.sizes) > 0 {
		parts := make([]string, len(z.sizes))
		prev := uint64(0)
		for i, n := range z.sizes {
			parts[i] = fmt.Sprintf("%d:%d", n, z.cum[i]-prev)
			prev = z.cum[i]
		}
		return strings.Join(parts, ",")
	}
	if z.max > z.min {
		return fmt.Sprintf("%d-%d", z.min, z.max)
	}
	return strconv.Itoa(z.min)
}
