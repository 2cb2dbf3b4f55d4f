package experiment

import (
	"math"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// Shape is an open run's timeline: a constant Rate, or a ramp of Stages,
// measured for Duration and/or Requests after Warmup.
type Shape struct {
	Rate timeline.Rate
	// Stages is the rate profile (nil: the constant Rate), as StageArg
	// gave it.
	Stages   *timeline.Stages
	StageArg string
	// Duration is the measured part of the timeline (with Stages: all of
	// it), Requests the measured requests (0: no bound).
	Duration time.Duration
	Requests uint64
	// Warmup is the leading part of the timeline not measured.
	Warmup time.Duration
}

// ShapeFlags are --rate, --stages, --duration, -n and --warmup as given:
// a nil pointer, or a false ...Set, was not given.
type ShapeFlags struct {
	Rate, Stages *string
	Duration     time.Duration
	DurationSet  bool
	Requests     *int64
	Warmup       time.Duration
	WarmupSet    bool
}

// Parse reads the timeline's shape: --rate with --duration and/or -n,
// or --stages (with -n if wanted), and --warmup. A bad one is a usage
// error in the flag's words.
func (f ShapeFlags) Parse() (Shape, error) {
	var s Shape
	if f.Stages != nil {
		if f.Rate != nil || f.DurationSet {
			return s, usage.Flagf("stages", "{stages} replaces {rate} and {duration}: give one or the other")
		}
		s.StageArg = *f.Stages
		list, err := timeline.ParseStages(s.StageArg)
		if err == nil {
			s.Stages, err = timeline.NewStages(list)
		}
		if err != nil {
			return s, usage.Flagf("stages", "{stages}: %v", err)
		}
		s.Duration = s.Stages.Duration()
	} else {
		if f.Rate == nil {
			return s, usage.Flagf("rate", "{rate} is required (for example {rate} 10k), or {stages}")
		}
		var err error
		if s.Rate, err = timeline.ParseRate(*f.Rate); err != nil {
			return s, usage.Flagf("rate", "{rate}: %v", err)
		}
		s.Duration = f.Duration
	}
	if f.Requests != nil {
		if n := *f.Requests; n <= 0 {
			return s, usage.Flagf("n", "{n} %d: want a positive number of requests", n)
		}
		s.Requests = uint64(*f.Requests)
		if !f.DurationSet && s.Stages == nil {
			s.Duration = 0 // -n alone bounds the run
		}
	}
	if f.DurationSet && s.Duration <= 0 || s.Requests == 0 && s.Duration <= 0 {
		return s, usage.Flagf("duration", "{duration} %s: want a positive duration such as 10s or 2m", f.Duration)
	}
	s.Warmup = f.Warmup
	switch {
	case s.Warmup < 0 || f.WarmupSet && s.Warmup == 0:
		return s, usage.Flagf("warmup", "{warmup} %s: want a positive duration such as 5s", s.Warmup)
	case s.Stages != nil && s.Warmup >= s.Duration:
		return s, usage.Flagf("warmup", "{warmup} %s: the stages last %s; the warmup must end before them", s.Warmup, s.Duration)
	case s.Duration > 0 && s.Warmup > math.MaxInt64-s.Duration:
		return s, usage.Flagf("warmup", "{warmup} %s: too long", s.Warmup)
	}
	return s, nil
}

// Timeline is the shape's timeline with arrival's process (uniform or
// poisson, drawn with seed).
func (s Shape) Timeline(arrival string, seed uint64) timeline.Timeline {
	switch {
	case s.Stages != nil && arrival == "poisson":
		return timeline.NewStagedPoisson(s.Stages, seed)
	case s.Stages != nil:
		return s.Stages
	case arrival == "poisson":
		return timeline.NewPoisson(s.Rate, seed)
	}
	return timeline.Uniform{Rate: s.Rate}
}

// Open is one run's timeline, load's arrival process drawn with seed, and
// the open loop's settings for it: load's, with the shape's rate, warm-up
// and bounds (Bounds), the results cut every interval.
func (s Shape) Open(load OpenLoad, interval time.Duration, seed uint64) (timeline.Timeline, openloop.Config) {
	tl := s.Timeline(load.Arrival, seed)
	oc := load.Open(interval)
	oc.Rate, oc.Warmup = s.Rate, s.Warmup
	oc.Duration, oc.Requests = s.Bounds(tl)
	return tl, oc
}

// Bounds returns the whole timeline's length and request bound for tl:
// with a rate the warmup comes before the duration and the requests; with
// stages it is their first part, and Requests counts the measured
// requests.
func (s Shape) Bounds(tl timeline.Timeline) (time.Duration, uint64) {
	d, n := s.Duration, s.Requests
	if s.Warmup == 0 {
		return d, n
	}
	if d > 0 && s.Stages == nil {
		d += s.Warmup
	}
	if n > 0 {
		n += timeline.Count(tl, int64(s.Warmup), math.MaxUint64)
	}
	return d, n
}
