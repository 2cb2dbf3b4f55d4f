package main

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/testrun"
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
		testrun.ParallelByDefault(6) // no race detector, no long runs: mostly waiting
	} else {
		testrun.ParallelByDefault(4)
	}
	goleak.VerifyTestMain(m)
}
