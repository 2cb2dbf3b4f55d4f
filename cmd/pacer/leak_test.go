package main

import (
	"os"
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
	goleak.VerifyTestMain(m)
}
