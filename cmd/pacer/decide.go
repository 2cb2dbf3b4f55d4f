package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/verdict"
)

// decideFlag is --decide-within (run; sweep --search's steps).
func decideFlag(use string) cli.Flag {
	return &cli.DurationFlag{Name: "decide-within", Usage: use, Category: catTrust}
}

// parseDecide reads --decide-within for tests of planned measured length
// planned (warmup included; 0: not known) judged by slo, as
// experiment.CheckBudget allows it: the budget (0 when not given).
func parseDecide(c *cli.Context, slo verdict.SLO, planned time.Duration) (time.Duration, error) {
	if !c.IsSet("decide-within") {
		return 0, nil
	}
	d := c.Duration("decide-within")
	if err := experiment.CheckBudget(d, slo, planned); err != nil {
		return 0, err
	}
	return d, nil
}
