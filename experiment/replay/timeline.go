package replay

// The replay's timeline from the trace's: the speed, the passes, and the
// bounds that keep every duration of the plan inside an int64.

import (
	"math"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
)

// timeline scales the trace: the speed (given, or what the rate makes
// it), the requests of all passes and how long they take, every one of
// them bounded, and each overflow the fault of the flag that made it.
func (p *Plan) timeline(cfg Config) error {
	sum := p.Summary
	p.Speed = cfg.Speed
	if cfg.Rate > 0 {
		if sum.MeanRate <= 0 {
			return usage.Flagf("rate", "{rate}: the trace has no span (its %d commands share one instant): give {speed}", sum.Commands)
		}
		p.Speed = cfg.Rate / sum.MeanRate
		if p.Speed > MaxSpeed {
			return usage.Flagf("rate", "{rate} %s: that is %.3g× the trace's mean rate (%s/s), above the fastest replay (%g×)",
				rateText(cfg.Rate), p.Speed, rateText(sum.MeanRate), float64(MaxSpeed))
		}
	}
	p.Requests = uint64(sum.Commands) * uint64(p.Loops)
	gap := time.Duration(0)
	if sum.Commands > 1 {
		gap = sum.Span / time.Duration(sum.Commands-1)
	}
	p.Length = sum.Span + gap
	// In float64 first: a tiny speed or many loops overflow an int64.
	pass := float64(sum.Span) / p.Speed
	whole := (float64(p.Loops-1)*float64(p.Length) + float64(sum.Span)) / p.Speed
	switch {
	case pass > float64(MaxSpan) && cfg.Rate > 0:
		return usage.Flagf("rate", "{rate} %s: the replay would last %s (%d requests at %s/s), longer than the %s pacer plans at most",
			rateText(cfg.Rate), years(pass), sum.Commands, rateText(cfg.Rate), years(float64(MaxSpan)))
	case pass > float64(MaxSpan):
		return usage.Flagf("speed", "{speed} %s: the replay would last %s (the trace's %s scaled by it), longer than the %s pacer plans at most",
			strconv.FormatFloat(p.Speed, 'g', -1, 64), years(pass), sum.Span, years(float64(MaxSpan)))
	case whole > float64(MaxSpan):
		return usage.Flagf("loop", "{loop} %d: the replay would last %s (%d passes of %s), longer than the %s pacer plans at most",
			p.Loops, years(whole), p.Loops, time.Duration(float64(p.Length)/p.Speed).Round(time.Millisecond), years(float64(MaxSpan)))
	}
	p.Span = time.Duration(whole)
	return nil
}

// years says a long duration (ns) in words.
func years(ns float64) string {
	y := ns / float64(365*24*time.Hour)
	switch {
	case math.IsInf(y, 0) || y > 1e6:
		return "more than a million years"
	case y >= 1:
		return strconv.FormatFloat(y, 'f', 0, 64) + " years"
	}
	return time.Duration(ns).Round(time.Second).String()
}

// rateText writes a rate as --rate reads it: 1000M, 10k, 0.5.
func rateText(r float64) string {
	switch {
	case r >= 1e6 && r == math.Trunc(r/1e6)*1e6:
		return strconv.FormatFloat(r/1e6, 'f', -1, 64) + "M"
	case r >= 1e3 && r == math.Trunc(r/1e3)*1e3:
		return strconv.FormatFloat(r/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(r, 'g', 6, 64)
}

// CheckWarmup refuses a --warmup that leaves nothing of the replay to
// measure: the trace's end bounds the warmup as it bounds the rest.
func (p *Plan) CheckWarmup(w time.Duration) error {
	if w > 0 && w >= p.Span {
		return usage.Flagf("warmup", "{warmup} %s: the replay lasts %s, and nothing would be left to measure", w, p.Span.Round(time.Millisecond))
	}
	return nil
}
