package main

import (
	"testing"

	"go.uber.org/goleak"
)

// Every command runs in-process in these tests: none may leave goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
