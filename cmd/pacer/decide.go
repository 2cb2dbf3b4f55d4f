package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// maxDecideWithin bounds --decide-within: a gate that may take longer
// than a CI job's hour is no gate.
const maxDecideWithin = time.Hour

// decideFlag is --decide-within (run; sweep --search's steps).
func decideFlag(use string) cli.Flag {
	return &cli.DurationFlag{Name: "decide-within", Usage: use, Category: catTrust}
}

// decideOpts is what --decide-within asks of a command's runs.
type decideOpts struct {
	budget time.Duration // 0: not given
}

// parseDecide reads --decide-within for tests of planned measured length
// planned (warmup included) judged by slo; refused without an SLO to
// decide, or with a budget shorter than the planned length.
func parseDecide(c *cli.Context, slo verdict.SLO, planned time.Duration) (decideOpts, error) {
	if !c.IsSet("decide-within") {
		return decideOpts{}, nil
	}
	d := c.Duration("decide-within")
	switch {
	case d <= 0 || d > maxDecideWithin:
		return decideOpts{}, usageErrorf("--decide-within %s: want a duration up to %s, such as 1m", d, maxDecideWithin)
	case slo.IsZero():
		return decideOpts{}, usageErrorf("--decide-within needs --slo: it measures until the SLO's verdict is decided")
	case planned > 0 && d < planned:
		return decideOpts{}, usageErrorf("--decide-within %s is shorter than the test's planned %s", d, planned)
	}
	return decideOpts{budget: d}, nil
}

// forTest is the experiment's Decide for a test judged with o and slo (nil
// without --decide-within).
func (d decideOpts) forTest(o report.TestOptions, slo verdict.SLO) *experiment.Decide {
	if d.budget <= 0 {
		return nil
	}
	return &experiment.Decide{Budget: d.budget, Options: o, SLO: slo}
}
