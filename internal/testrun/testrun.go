// Package testrun holds what the tests of several packages do the same
// way: set up before they run, skip, count allocations, make FIFOs, and
// look for strings in what a command printed.
package testrun

import (
	"flag"
	"strconv"
)

// ParallelByDefault lets n parallel tests run at once unless -parallel
// was given. Call it from TestMain after flag.Parse. go test's default is
// GOMAXPROCS, which on a 2-core machine leaves it idle while tests that
// mostly wait on servers and timed runs take turns; tests that judge
// timing do not call t.Parallel, so they are not affected.
func ParallelByDefault(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}
