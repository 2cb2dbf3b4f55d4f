package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/timeline"
)

// TestShape: the timeline's shape from --rate, --stages, --duration, -n
// and --warmup, its bounds with the warmup, and the usage errors.
func TestShape(t *testing.T) {
	const s = time.Second
	str := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		f    ShapeFlags
		d    time.Duration // Bounds of the uniform timeline
		req  uint64
		err  string
	}{
		{"rate and duration", ShapeFlags{Rate: str("1k"), Duration: 10 * s}, 10 * s, 0, ""},
		{"-n alone bounds the run", ShapeFlags{Rate: str("1k"), Duration: 10 * s, Requests: n(500)}, 0, 500, ""},
		{"both, whichever first", ShapeFlags{Rate: str("1k"), Duration: 2 * s, DurationSet: true, Requests: n(500)}, 2 * s, 500, ""},
		{"warmup before", ShapeFlags{Rate: str("1k"), Duration: 2 * s, DurationSet: true, Requests: n(500), Warmup: s, WarmupSet: true}, 3 * s, 1500, ""},
		{"stages", ShapeFlags{Stages: str("1s:1k,1s:1k"), Duration: 10 * s, Warmup: s, WarmupSet: true}, 2 * s, 0, ""},
		{"no rate", ShapeFlags{Duration: 10 * s}, 0, 0, "--rate is required"},
		{"bad rate", ShapeFlags{Rate: str("x"), Duration: 10 * s}, 0, 0, "--rate:"},
		{"stages and rate", ShapeFlags{Rate: str("1k"), Stages: str("1s:1k")}, 0, 0, "--stages replaces"},
		{"bad stages", ShapeFlags{Stages: str("x")}, 0, 0, "--stages:"},
		{"-n 0", ShapeFlags{Rate: str("1k"), Duration: s, Requests: n(0)}, 0, 0, "-n 0"},
		{"no duration", ShapeFlags{Rate: str("1k"), Duration: 0, DurationSet: true}, 0, 0, "--duration 0s"},
		{"a zero warmup", ShapeFlags{Rate: str("1k"), Duration: s, WarmupSet: true}, 0, 0, "--warmup 0s"},
		{"a warmup past the stages", ShapeFlags{Stages: str("1s:1k"), Warmup: 2 * s, WarmupSet: true}, 0, 0, "the stages last 1s"},
	} {
		sh, err := tc.f.Parse()
		if tc.err != "" {
			if !usage.Is(err) || !strings.Contains(usagetest.CLI(err), tc.err) {
				t.Errorf("%s: %v, want a usage error with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		tl := sh.Timeline("uniform", 1)
		if d, req := sh.Bounds(tl); d != tc.d || req != tc.req {
			t.Errorf("%s: bounds %v %d, want %v %d", tc.name, d, req, tc.d, tc.req)
		}
	}
	sh, _ := ShapeFlags{Rate: str("1k"), Duration: s}.Parse()
	if _, ok := sh.Timeline("poisson", 1).(*timeline.Poisson); !ok {
		t.Errorf("poisson: %T", sh.Timeline("poisson", 1))
	}
}

// TestShapeOpen: a run's open loop takes the shape's rate, warm-up and
// bounds (the warm-up before the duration and the requests) over the
// load's settings, and its arrival process.
func TestShapeOpen(t *testing.T) {
	s := Shape{Rate: timeline.RatePerSecond(1000), Duration: 2 * time.Second, Requests: 500, Warmup: time.Second}
	load := OpenLoad{Arrival: "poisson"}
	tl, oc := s.Open(load, 250*time.Millisecond, 42)
	if _, ok := tl.(*timeline.Poisson); !ok {
		t.Errorf("timeline %T, want poisson arrivals", tl)
	}
	if oc.Rate != s.Rate || oc.Warmup != time.Second || oc.Duration != 3*time.Second || oc.Interval != 250*time.Millisecond {
		t.Errorf("rate %v warm-up %s duration %s interval %s", oc.Rate, oc.Warmup, oc.Duration, oc.Interval)
	}
	if want := 500 + timeline.Count(tl, int64(time.Second), 1<<62); oc.Requests != want {
		t.Errorf("requests %d, want %d (the warm-up's before the 500)", oc.Requests, want)
	}
	if _, oc := s.Open(OpenLoad{Arrival: "uniform"}, time.Second, 1); oc.Requests != 1500 {
		t.Errorf("uniform: requests %d, want 1500", oc.Requests)
	}
}
