package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/timeline"
)

// Validate checks what a sweep's flags may get wrong, before anything
// runs: the step's length and settling, an open sweep's rates or search,
// a closed sweep's points. Its errors are usage errors in the flags'
// words.
func (c *Config) Validate() error {
	switch {
	case c.StepDuration <= 0:
		return usage.Flagf("step-duration", "{step-duration} %s: want a positive duration such as 5s", c.StepDuration)
	case c.Settle < 0:
		return usage.Flagf("settle", "{settle} %s: must not be negative", c.Settle)
	case c.AbortAfter < 0:
		return usage.Flagf("abort-after", "{abort-after} %s: must not be negative", c.AbortAfter)
	case len(c.Clients)*len(c.Pipelines) > MaxPoints:
		return usage.Flagf("c", "{c} × {P} makes %d points; at most %d", len(c.Clients)*len(c.Pipelines), MaxPoints)
	case len(c.Rates) > MaxPoints:
		return usage.Flagf("rates", "{rates} lists %d rates; at most %d", len(c.Rates), MaxPoints)
	case !c.Search:
		return nil
	case c.SLO.IsZero():
		return usage.Flagf("search", "{search} needs {slo}: the search finds the highest rate that meets it")
	case c.MaxSteps < 1 || c.MaxSteps > MaxPoints:
		return usage.Flagf("max-steps", "{max-steps} %d: want 1 to %d", c.MaxSteps, MaxPoints)
	}
	return nil
}

// RateFlags are an open sweep's rate flags as the user gave them (nil:
// not given).
type RateFlags struct {
	Rates, From, To, Step *string
	// Precision and MaxSteps are a search's --precision (parseShare) and
	// --max-steps.
	Precision string
	MaxSteps  int
}

// SetRates reads the rates of an open sweep: with Search the search's
// bounds (From defaults to DefaultSearchFrom), else the listed --rates or
// --from to --to by --step. Its errors are usage errors in the flags'
// words; Validate checks the rest.
func (c *Config) SetRates(f RateFlags) error {
	rate := func(name string, v *string) (float64, error) {
		r, err := timeline.ParseRate(*v)
		if err != nil {
			return 0, usage.Flagf(name, "%v: %v", usage.Name(name), err)
		}
		return r.PerSecond(), nil
	}
	var err error
	switch {
	case c.Search:
		if name := given(flag{"rates", f.Rates}, flag{"step", f.Step}); name != "" {
			return usage.Flagf("search", "{search} chooses its own rates: drop %v ({from} and {to} bound it)", usage.Name(name))
		}
		c.From = DefaultSearchFrom
		if f.From != nil {
			if c.From, err = rate("from", f.From); err != nil {
				return err
			}
		}
		if f.To != nil {
			if c.To, err = rate("to", f.To); err != nil {
				return err
			}
			// --to below a given --from is a mistake; below the default
			// --from, the search starts at --to.
			if c.To < c.From && f.From != nil {
				return usage.Flagf("to", "{to} %s is below {from} %s", *f.To, *f.From)
			}
		}
		if c.Precision, err = parseShare(f.Precision); err != nil {
			return usage.Flagf("precision", "{precision} %q: want a share such as 5%% or 0.05, above 0 and below 100%%", f.Precision)
		}
		c.MaxSteps = f.MaxSteps
	case f.Rates != nil:
		if name := given(flag{"from", f.From}, flag{"to", f.To}, flag{"step", f.Step}); name != "" {
			return usage.Flagf("rates", "{rates} lists the rates: drop %v", usage.Name(name))
		}
		if c.Rates, err = parseRates(*f.Rates); err != nil {
			return usage.Flagf("rates", "{rates}: %v", err)
		}
	case f.From != nil || f.To != nil || f.Step != nil:
		if f.From == nil || f.To == nil || f.Step == nil {
			return usage.Flagf("from", "{from}, {to} and {step} go together (or list the rates with {rates})")
		}
		var from, to, step float64
		if from, err = rate("from", f.From); err != nil {
			return err
		}
		if to, err = rate("to", f.To); err != nil {
			return err
		}
		if step, err = rate("step", f.Step); err != nil {
			return err
		}
		if to < from {
			return usage.Flagf("to", "{to} %s is below {from} %s", *f.To, *f.From)
		}
		var ok bool
		if c.Rates, ok = ratesBetween(from, to, step); !ok {
			return usage.Flagf("from", "{from} %s {to} %s {step} %s makes more than %d steps", *f.From, *f.To, *f.Step, MaxPoints)
		}
	default:
		return usage.Flagf("", "give the rates ({rates} 10k,20k,40k, or {from}, {to} and {step}), {search} with {slo}, or {closed}")
	}
	return nil
}

// flag is a flag's name and value (nil: not given).
type flag struct {
	name string
	v    *string
}

// given is the name of the first flag given ("" for none).
func given(flags ...flag) string {
	for _, f := range flags {
		if f.v != nil {
			return f.name
		}
	}
	return ""
}

// parseRates reads a list of rates, comma-separated: 10k,20k,40k.
func parseRates(list string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		r, err := timeline.ParseRate(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r.PerSecond())
	}
	return out, nil
}

// ratesBetween lists the rates from from to to (included, within
// rounding) by step, each rounded to a thousandth of a request per
// second. It refuses (ok false) a step that is not positive and a list
// of more than MaxPoints.
func ratesBetween(from, to, step float64) (rates []float64, ok bool) {
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

// parseShare reads 5% or 0.05: a share strictly between 0 and 1 (a
// search's precision).
func parseShare(s string) (float64, error) {
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
