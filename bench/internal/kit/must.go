package kit

import (
	"fmt"
	"os"
)

// Must returns v, or ends the program when err is set: "bench: " and the
// error on stderr, exit status 1. A measurement cannot go on without the
// server, cluster or directory it asked for.
func Must[T any](v T, err error) T {
	Check(err)
	return v
}

// Check ends the program as Must does when err is set.
func Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
