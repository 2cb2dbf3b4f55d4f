package testrun

import (
	"testing"
	"time"
)

// Finishes fails t when f does not return within a generous bound (20 s):
// for work that must not hang whatever the server does, nor grow with
// the rate or the length of a run.
func Finishes(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not finish in 20 s", what)
	}
}
