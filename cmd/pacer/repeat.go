package main

import (
	"github.com/urfave/cli/v2"
)

// --repeat and --ci, shared by run, bench and sweep.

// maxRepeat bounds --repeat.
const maxRepeat = 1000

func repeatFlag() cli.Flag {
	return &cli.IntFlag{Name: "repeat", Value: 1, Usage: "run each test (sweep: each point) `N` times and report the median and min–max of each figure; the JSON keeps every run", Category: catLoad}
}

func ciFlag() cli.Flag {
	return &cli.BoolFlag{Name: "ci", Usage: "print a 95% confidence interval for each percentile: from the spread between --repeat's runs, or a block bootstrap over one run's intervals", Category: catOutput}
}

// parseRepeat reads --repeat.
func parseRepeat(c *cli.Context) (int, error) {
	n := c.Int("repeat")
	if n < 1 || n > maxRepeat {
		return 0, usageErrorf("--repeat %d: want 1 to %d runs", n, maxRepeat)
	}
	return n, nil
}
