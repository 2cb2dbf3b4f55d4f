package timeline

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a request rate stored exactly as thousandths of a request per
// second, so "0.5", "10k" and "1.5M" all parse without float rounding and the
// timeline stays integer arithmetic.
type Rate struct{ milli uint64 }

// maxRateMilli bounds what ParseRate accepts, in thousandths of a request
// per second: a billion requests per second is far beyond any client, and
// keeps offset arithmetic well inside 64 bits.
const maxRateMilli = 1e12

// RatePerSecond returns the Rate closest to r requests per second.
func RatePerSecond(r float64) Rate {
	if r <= 0 || math.IsNaN(r) {
		return Rate{}
	}
	return Rate{milli: uint64(math.Round(r * 1000))}
}

// ParseRate reads a rate in requests per second: a decimal number with up to
// three fractional digits and an optional suffix k (thousand) or M (million),
// e.g. "2500", "10k", "1.5M", "0.5".
func ParseRate(s string) (Rate, error) {
	r, err := parseRate(s)
	if err == nil && r.milli == 0 {
		return Rate{}, errors.New("rate must be above zero")
	}
	return r, err
}

// parseRate is ParseRate that also reads a zero rate ("0", "0k").
func parseRate(s string) (Rate, error) {
	orig := s
	s = strings.TrimSpace(s)
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1_000_000, s[:len(s)-1]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" && frac == "" || strings.ContainsAny(s, "+-eE") {
		return Rate{}, fmt.Errorf("rate %q: want a number of requests per second such as 2500, 10k, 1.5M or 0.5", orig)
	}
	if hasDot && frac == "" {
		return Rate{}, fmt.Errorf("rate %q: want a number of requests per second such as 2500, 10k, 1.5M or 0.5", orig)
	}
	// Scale to thousandths of a request: mult*1000 with the fraction's digits.
	scale := mult * 1000
	whole := uint64(0)
	if intPart != "" {
		v, err := strconv.ParseUint(intPart, 10, 64)
		if err != nil {
			return Rate{}, fmt.Errorf("rate %q: want a number of requests per second such as 2500, 10k, 1.5M or 0.5", orig)
		}
		whole = v
	}
	if whole > maxRateMilli/scale {
		return Rate{}, fmt.Errorf("rate %q is above the maximum of 1000M requests per second", orig)
	}
	milli := whole * scale
	for _, c := range frac {
		if c < '0' || c > '9' {
			return Rate{}, fmt.Errorf("rate %q: want a number of requests per second such as 2500, 10k, 1.5M or 0.5", orig)
		}
		scale /= 10
		if scale == 0 {
			if c != '0' {
				return Rate{}, fmt.Errorf("rate %q has more precision than 0.001 requests per second", orig)
			}
			continue
		}
		milli += uint64(c-'0') * scale
	}
	return Rate{milli: milli}, nil
}

// PerSecond returns the rate in requests per second.
func (r Rate) PerSecond() float64 { return float64(r.milli) / 1000 }

// Milli returns the rate in thousandths of a request per second, exactly
// as it is stored (a token bucket's rate without float rounding).
func (r Rate) Milli() uint64 { return r.milli }

// IsZero reports whether no rate is set.
func (r Rate) IsZero() bool { return r.milli == 0 }

// String formats the rate the way ParseRate reads it back.
func (r Rate) String() string {
	if r.milli%1000 == 0 {
		return strconv.FormatUint(r.milli/1000, 10)
	}
	return strconv.FormatFloat(r.PerSecond(), 'f', -1, 64)
}
