package main

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// Every command runs in-process in these tests: none may leave goroutines.
// Started with hogEnv set, the test binary is a CPU hog instead (see
// startHog).
func TestMain(m *testing.M) {
	if os.Getenv(hogEnv) != "" {
		hog()
		return
	}
	flag.Parse()
	if testing.Short() {
		parallelByDefault(8) // no race detector, no long runs: mostly waiting
	} else {
		parallelByDefault(4)
	}
	goleak.VerifyTestMain(m)
}

// parallelByDefault runs n parallel tests at once unless -parallel was
// given: most tests here wait on timed runs of a few hundred requests
// a second, so GOMAXPROCS (go test's default) would leave a 2-core
// machine idle. Tests that judge timing do not call t.Parallel.
func parallelByDefault(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}
