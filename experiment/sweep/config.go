package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler"
)

// Validate checks what a sweep's flags may get wrong, before anything
// runs: the step's length and settling, an open sweep's rates or search,
// a closed sweep's points. Its errors are usage errors in the flags'
// words.
func (c *Config) Validate() error {
	switch {
	case c.StepDuration <= 0:
		return usage.Errorf("--step-duration %s: want a positive duration such as 5s", c.StepDuration)
	case c.Settle < 0:
		return usage.Errorf("--settle %s: must not be negative", c.Settle)
	case c.AbortAfter < 0:
		return usage.Errorf("--abort-after %s: must not be negative", c.AbortAfter)
	case len(c.Clients)*len(c.Pipelines) > MaxPoints:
		return usage.Errorf("-c × -P makes %d points; at most %d", len(c.Clients)*len(c.Pipelines), MaxPoints)
	case len(c.Rates) > MaxPoints:
		return usage.Errorf("--rates lists %d rates; at most %d", len(c.Rates), MaxPoints)
	case !c.Search:
		return nil
	case c.SLO.IsZero():
		return usage.Errorf("--search needs --slo: the search finds the highest rate that meets it")
	case c.MaxSteps < 1 || c.MaxSteps > MaxPoints:
		return usage.Errorf("--max-steps %d: want 1 to %d", c.MaxSteps, MaxPoints)
	}
	return nil
}

// ParseRates reads a list of rates, comma-separated: 10k,20k,40k.
func ParseRates(list string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		r, err := scheduler.ParseRate(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r.PerSecond())
	}
	return out, nil
}

// RatesBetween lists the rates from from to to (included, within
// rounding) by step, each rounded to a thousandth of a request per
// second. It refuses (ok false) a step that is not positive and a list
// of more than MaxPoints.
func RatesBetween(from, to, step float64) (rates []float64, ok bool) {
	if !(step > 0) || (to-from)/step >= MaxPoints {
		return nil, false
	}
	for k := 0; ; k++ {
		r := from + float64(k)*step
		if r > to*(1+1e-12) {
			return rates, true
		}
		rates = append(rates, math.Round(r*1000)/1000)
	}
}

// ParseShare reads 5% or 0.05: a share strictly between 0 and 1 (a
// search's precision).
func ParseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("bad share %q", s)
	}
	return v, nil
}
